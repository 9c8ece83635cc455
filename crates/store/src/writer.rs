//! Who writes (`AuditCtx`) and the proof that their change was audited
//! (`Audited`): a write transaction (`db`) carries the one and demands the
//! other, the audit log (`audit`) makes the proof. They live below both so
//! that neither imports the other.

use upstate_core::audit::Actor;

/// Who is writing, and from where: carried by every write transaction.
#[derive(Debug, Clone)]
pub struct AuditCtx {
    pub actor: Actor,
    pub client_addr: Option<String>,
    pub user_agent: Option<String>,
}

impl AuditCtx {
    pub fn of(actor: Actor) -> AuditCtx {
        AuditCtx {
            actor,
            client_addr: None,
            user_agent: None,
        }
    }
}

/// Proof that a transaction appended its audit event: `Tx::commit` asks for
/// it, and only `Tx::audit` makes one.
#[must_use = "a change commits with its audit event"]
pub struct Audited(());

impl Audited {
    /// For a transaction that wrote only bookkeeping (a monitor's check
    /// that moved nothing): nothing anyone audits or hears of.
    pub(crate) fn bookkeeping() -> Audited {
        Audited(())
    }

    /// Made by `Tx::audit` once the event is written, and by nothing else.
    pub(crate) fn appended() -> Audited {
        Audited(())
    }
}
