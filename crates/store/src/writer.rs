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
    /// The change tells no subscriber (the operator turned "notify
    /// subscribers" off); the team's channels, the page and its live
    /// visitors still hear of it.
    pub quiet: bool,
}

impl AuditCtx {
    pub fn of(actor: Actor) -> AuditCtx {
        AuditCtx {
            actor,
            client_addr: None,
            user_agent: None,
            quiet: false,
        }
    }

    /// The same caller, telling subscribers nothing when `quiet`.
    pub fn quiet_if(&self, quiet: bool) -> AuditCtx {
        AuditCtx {
            quiet,
            ..self.clone()
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
