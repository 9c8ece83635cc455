//! Any bytes as the JSON body of any route: the strict reader, then the
//! input type's own validation, must answer (never panic), and whatever the
//! reader accepts is one JSON object serde_json itself reads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use upstate_core::input::{JsonError, read_json};
use upstate_core::*;

fn read<T: DeserializeOwned>(body: &[u8]) -> Option<T> {
    match read_json::<T>(body) {
        Ok(t) => {
            let v: serde_json::Value =
                serde_json::from_slice(body).expect("accepted body is JSON serde_json reads");
            assert!(v.is_object(), "accepted body is an object");
            Some(t)
        }
        Err(JsonError::Invalid(e)) => {
            assert!(!e.is_empty(), "a refusal names a field");
            None
        }
        Err(JsonError::Malformed(why)) => {
            assert!(!why.is_empty());
            None
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, body)) = data.split_first() else {
        return;
    };
    match which % 20 {
        0 => drop(read::<NewPageInput>(body).map(NewPageInput::validate)),
        1 => drop(read::<PagePatchInput>(body).map(PagePatchInput::validate)),
        2 => drop(read::<NewComponentInput>(body).map(NewComponentInput::validate)),
        3 => drop(read::<ComponentPatchInput>(body).map(ComponentPatchInput::validate)),
        4 => drop(read::<NewGroupInput>(body).map(NewGroupInput::validate)),
        5 => drop(read::<NewIncidentInput>(body).map(NewIncidentInput::validate)),
        6 => drop(read::<IncidentPatchInput>(body).map(IncidentPatchInput::validate)),
        7 => drop(read::<NewIncidentUpdateInput>(body).map(NewIncidentUpdateInput::validate)),
        8 => drop(read::<ResolveInput>(body).map(ResolveInput::validate)),
        9 => drop(read::<NewMaintenanceInput>(body).map(NewMaintenanceInput::validate)),
        10 => drop(read::<MaintenancePatchInput>(body).map(MaintenancePatchInput::validate)),
        11 => drop(read::<ReorderInput>(body).map(ReorderInput::validate)),
        12 => drop(
            read::<recurring::RecurringInput>(body)
                .map(|i| i.apply(None, |_| Some("Europe/Amsterdam".into()))),
        ),
        13 => drop(read::<templates::TemplateInput>(body).map(templates::TemplateInput::validate)),
        14 => drop(
            read::<monitors::MonitorInput>(body)
                .map(|i| i.apply(&monitors::MonitorConfig::default())),
        ),
        15 => drop(read::<notify::ChannelInput>(body).map(notify::ChannelInput::validate_new)),
        16 => drop(read::<notify::SubscribeInput>(body).map(notify::SubscribeInput::validate)),
        17 => drop(read::<comments::CommentInput>(body).map(comments::CommentInput::validate)),
        18 => drop(
            read::<settings::SettingsInput>(body)
                .map(|i| i.apply(&settings::Settings::default(), &["en", "de"])),
        ),
        _ => drop(
            read::<postmortem::PostmortemInput>(body).map(postmortem::PostmortemInput::validate),
        ),
    }
});
