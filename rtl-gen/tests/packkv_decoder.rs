//! `rtl-gen emit packkv-decoder`: each rule between its parameters is one
//! line naming the parameter, exit 2, no files (spec §14.14.2).

use std::process::Command;

fn emit(sets: &[&str]) -> (Option<i32>, String) {
    let dir = std::env::temp_dir().join(format!("kvforge-pkdec-{}", std::process::id()));
    let mut c = Command::new(env!("CARGO_BIN_EXE_rtl-gen"));
    c.args(["emit", "packkv-decoder", "-o"]).arg(&dir);
    for s in sets {
        c.args(["--set", s]);
    }
    let out = c.output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn rules_between_parameters_are_one_line_errors() {
    for (sets, want) in [
        (&["lanes=64", "head-dim=128"][..], "lanes x r (64 x 4) must be at most 128"),
        (&["levels=255", "lanes=32"][..], "lanes x r (32 x 8) must be at most 128"),
        // burst 2 (the default): the core of 2 x lanes through the same shifter
        (&["levels=255"][..], "burst 2 needs 2 x lanes x r (32 x 8) at most 128"),
        (&["lanes=32", "heads=2"][..], "burst 2 needs 2 x lanes x r (64 x 4) at most 128"),
        (&["lanes=8", "head-dim=8"][..], "burst 2 needs 2 x lanes (16) to divide heads x head-dim (8)"),
        (&["burst=3"][..], "burst must be in 1..=2, got 3"),
        (&["pack=32", "block=16"][..], "pack (32) must divide block (16)"),
        (&["lanes=32", "head-dim=16"][..], "lanes (32) must divide head-dim (16)"),
        (&["heads=64", "head-dim=256"][..], "heads"),
        (&["repack=\"median\""][..], "repack"),
        (&["interleave=\"gpu\""][..], "interleave"),
    ] {
        let (code, err) = emit(sets);
        assert_eq!(code, Some(2), "{sets:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{sets:?}: {err}");
        assert!(err.contains(want), "{sets:?}: {err}");
    }
}

/// Spec §14.14.2: a block of 16 at the defaults keeps burst 2, its core
/// taking 2 metadata words a cycle instead of 4 (the permutation copy must
/// outlast the shifter's 7 stages): it emits, with the 4-word input.
#[test]
fn short_block_keeps_burst_2() {
    let dir = std::env::temp_dir().join(format!("kvforge-pkdec-b16-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_rtl-gen"))
        .args(["emit", "packkv-decoder", "--set", "block=16", "-o"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = std::fs::read_to_string(dir.join("packkv_decoder.v")).unwrap();
    assert!(v.contains("\"burst\":2"), "burst 2 in the header");
    assert!(v.contains("input  wire [127:0] in_words,"), "4 input words");
    let _ = std::fs::remove_dir_all(&dir);
}
