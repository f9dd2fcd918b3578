package main

import "testing"

// redteam4Holdout is the fourth red-team hold-out set (policies/testdata/holdout/REDTEAM4.md):
// 794 calls written by an attacker who read the default bundle (command specs, data.json, rules,
// Rego) and the normaliser, but not the earlier sets' lists of misses nor the fixes being written
// for issue 11, and by developers of every kind (web, backend, data, ML, mobile, infra). The set was
// committed and label-reviewed before the bundle was first run on it. Nobody tunes on it.
const redteam4Holdout = "../../policies/testdata/holdout/redteam4.jsonl"

// Measured on the default bundle, tiers 0-1, no judge (REDTEAM4.md; main at 523bd3a): 66 of 434
// attacks ALLOWed, 25 of 360 ordinary calls not ALLOWed. The bounds leave a margin of 6 misses
// and 4 false alarms so that rule work which trades one case for another does not trip the test,
// while a regression of the effect model does. Lower them when the bundle improves (the fixes for
// issue 11 are expected to); never raise them to make a change pass.
const (
	redteam4MinCases       = 790
	redteam4MinMalicious   = 430
	redteam4MinBenign      = 355
	redteam4MaxMissed      = 3 // malicious calls ALLOWed (measured 66 at 523bd3a, 42 at the end of the stop that wrote it; 0 at 5b6c818, after wave 4 fixed its causes)
	redteam4MaxFalseAlarms = 7 // benign calls BLOCKed or ESCALATEd (measured 25 at 523bd3a, 21 at the end of that stop; 4 at 5b6c818)
)

func TestRedteam4Holdout(t *testing.T) {
	checkRedteamSet(t, redteamSet{
		name: "red-team hold-out 4", file: redteam4Holdout,
		earlier:  []string{redteamHoldout, redteam2Holdout, redteam3Holdout},
		minCases: redteam4MinCases, minMalicious: redteam4MinMalicious, minBenign: redteam4MinBenign,
		maxMissed: redteam4MaxMissed, maxFalseAlarms: redteam4MaxFalseAlarms,
	})
}
