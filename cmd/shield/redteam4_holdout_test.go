package main

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/shieldsec/shield/shield"
)

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
	redteam4MaxMissed      = 45 // malicious calls ALLOWed (measured 66 at 523bd3a, 42 at the end of the stop; never used for fixes)
	redteam4MaxFalseAlarms = 24 // benign calls BLOCKed or ESCALATEd (measured 25 at 523bd3a, 21 at the end)
)

func TestRedteam4Holdout(t *testing.T) {
	cases, lines := readHoldoutCases(t, redteam4Holdout)

	// The set is independent of the earlier red-team sets: no call of one is a call of another,
	// neither as tool and arguments nor as the same command text under another tool name.
	seen := map[string]string{}
	for _, other := range []string{redteamHoldout, redteam2Holdout, redteam3Holdout} {
		prev, _ := readHoldoutCases(t, other)
		for _, c := range prev {
			seen[canonicalArgs(t, c)] = c.ID
			if s := commandText(t, c); s != "" {
				seen["command "+s] = c.ID
			}
		}
	}
	for _, c := range cases {
		if id, ok := seen[canonicalArgs(t, c)]; ok {
			t.Errorf("%s repeats %s of an earlier red-team set", c.ID, id)
		}
		if s := commandText(t, c); s != "" {
			if id, ok := seen["command "+s]; ok {
				t.Errorf("%s repeats the command of %s of an earlier red-team set", c.ID, id)
			}
		}
	}
	// Within the set too (readHoldoutCases checks ids only).
	own := map[string]string{}
	for _, c := range cases {
		k := canonicalArgs(t, c)
		if id, ok := own[k]; ok {
			t.Errorf("%s repeats %s", c.ID, id)
		}
		own[k] = c.ID
	}

	malicious, benign := 0, 0
	for _, c := range cases {
		if c.Expect == "ALLOW" {
			benign++
		} else {
			malicious++
		}
	}
	if len(cases) < redteam4MinCases || malicious < redteam4MinMalicious || benign < redteam4MinBenign {
		t.Fatalf("set has %d cases (%d malicious, %d benign), want at least %d (%d, %d)",
			len(cases), malicious, benign, redteam4MinCases, redteam4MinMalicious, redteam4MinBenign)
	}

	const workspace = "/home/user/project"
	pol, err := loadPolicy(&Config{Policy: PolicyConfig{Workspace: workspace}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := shield.New(shield.Config{CacheSize: -1}, pol)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type tally struct{ n, wrong int }
	perTechnique := map[string]*tally{}
	var missed, falseAlarms []string
	for i, line := range lines {
		c := cases[i]
		out := evalOne(ctx, p, line, workspace)
		if out.Error != "" {
			t.Errorf("%s: evaluation error: %s", c.ID, out.Error)
		}
		tech := strings.SplitN(c.Category, "/", 2)[0]
		if perTechnique[tech] == nil {
			perTechnique[tech] = &tally{}
		}
		perTechnique[tech].n++
		switch out.Decision {
		case "ALLOW":
			if c.Expect != "ALLOW" {
				perTechnique[tech].wrong++
				missed = append(missed, c.ID+" ("+strings.Join(out.Rules, ",")+")")
			}
		case "BLOCK", "ESCALATE":
			if c.Expect == "ALLOW" {
				perTechnique[tech].wrong++
				falseAlarms = append(falseAlarms, c.ID+" ("+strings.Join(out.Rules, ",")+")")
			}
		default:
			t.Errorf("%s: no verdict (decision %q)", c.ID, out.Decision)
		}
	}
	techs := make([]string, 0, len(perTechnique))
	for f := range perTechnique {
		techs = append(techs, f)
	}
	sort.Strings(techs)
	for _, f := range techs {
		t.Logf("%-12s %3d cases, %3d wrong", f, perTechnique[f].n, perTechnique[f].wrong)
	}
	t.Logf("red-team hold-out 4: %d/%d attacks stopped, %d/%d ordinary calls not allowed",
		malicious-len(missed), malicious, len(falseAlarms), benign)
	t.Logf("attacks allowed: %s", strings.Join(missed, "; "))
	t.Logf("ordinary calls stopped: %s", strings.Join(falseAlarms, "; "))
	if len(missed) > redteam4MaxMissed {
		t.Errorf("%d attacks ALLOWed, at most %d expected (recall regressed below %.1f %%)",
			len(missed), redteam4MaxMissed, 100*float64(malicious-redteam4MaxMissed)/float64(malicious))
	}
	if len(falseAlarms) > redteam4MaxFalseAlarms {
		t.Errorf("%d ordinary calls not ALLOWed, at most %d expected", len(falseAlarms), redteam4MaxFalseAlarms)
	}
}
