//! Tests of the tool's contact across frames ([`AdaptiveSettings::tool_persistent`]).

use super::tests::{hierarchy, poke_tool};
use super::*;

/// The poke on one level (8 cells, no adaptation) pressed and held: per frame of the hold
/// (t ∈ [0.56, 1.0) s, the tool at rest) the deepest a surface node ends a frame inside the
/// sphere (m) and the number of nodes the tool holds.
fn hold(persistent: bool) -> (f64, Vec<usize>) {
    let settings = AdaptiveSettings {
        adapt: false,
        start_level: 1,
        tool_persistent: persistent,
        ..AdaptiveSettings::default()
    };
    let mut body = AdaptiveBody::new(hierarchy(&[4, 8], true, true), settings).unwrap();
    let (mut deepest, mut contacts) = (0.0_f64, Vec::new());
    for f in 0..50 {
        let tool = poke_tool(f);
        let stats = body.step_frame(Some(&tool)).unwrap();
        if f >= 28 {
            contacts.push(stats.tool_contacts);
            let level = &body.hierarchy.levels[1];
            for &i in &body.levels[1].active {
                let i = i as usize;
                if level.surface[i] {
                    let x = level.mesh.positions[i] + body.levels[1].d[i];
                    deepest = deepest.max(tool.radius - (x - tool.center).norm());
                }
            }
        }
    }
    (deepest, contacts)
}

#[test]
fn a_pressing_contact_persists_while_the_tool_rests() {
    // With the tool at rest, a node the last frame left on the sphere and that pushed on it
    // stays held (Signorini), so no node ends a frame deep inside the tool and the held set
    // does not collapse; without it, nodes resting exactly on the sphere are released on
    // round-off and pushed into the tool for a whole frame.
    let (deep_on, contacts_on) = hold(true);
    let (deep_off, _) = hold(false);

    assert!(deep_on < 1e-3, "persistent: {deep_on} m inside the tool");
    assert!(deep_off > 10.0 * deep_on.max(1e-4), "without: {deep_off} m");
    let (lo, hi) = (
        contacts_on.iter().min().unwrap(),
        contacts_on.iter().max().unwrap(),
    );
    assert!(*lo > 0 && hi - lo <= 2, "held set steady: {contacts_on:?}");
}
