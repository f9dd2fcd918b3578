package activate

import (
	"encoding/json"
	"fmt"

	"github.com/shieldsec/shield/policies"
	"github.com/shieldsec/shield/policy"
	"github.com/shieldsec/shield/shield/normalize"
)

// ProseFile is the bundle's intent lexicon of free text (shield/normalize tools_prose_intent.go):
// the bundle's own replaces the default bundle's; without either, no intent is read from plain
// words.
const ProseFile = "prose.yaml"

// DataFile is the bundle's root Rego data; the normaliser reads the agent instruction files from
// it (shield.lists.agent_instruction_files), so rules and normaliser use one list.
const DataFile = "data.json"

func proseLexicon(b *policy.Bundle, opt Options) (*normalize.ProseLexicon, error) {
	if data, ok := b.Files[ProseFile]; ok {
		return normalize.ParseProseLexicon(ProseFile, data)
	}
	if opt.NoBaseCatalog {
		return nil, nil
	}
	data, err := policies.Default.ReadFile("default/" + ProseFile)
	if err != nil {
		return nil, fmt.Errorf("read the embedded prose lexicon: %w", err)
	}
	return normalize.ParseProseLexicon("default/"+ProseFile, data)
}

// instructionFiles reads shield.lists.agent_instruction_files from the bundle's data.json (the
// default bundle's when the bundle has none and the base catalog is in use). A data.json that
// does not parse is an error here as it is for the Rego engine.
func instructionFiles(b *policy.Bundle, opt Options) ([]string, error) {
	name, data, ok := DataFile, b.Files[DataFile], b.Files[DataFile] != nil
	if !ok {
		if opt.NoBaseCatalog {
			return nil, nil
		}
		var err error
		name = "default/" + DataFile
		if data, err = policies.Default.ReadFile(name); err != nil {
			return nil, fmt.Errorf("read the embedded data: %w", err)
		}
	}
	var doc struct {
		Shield struct {
			Lists struct {
				Files []string `json:"agent_instruction_files"`
			} `json:"lists"`
		} `json:"shield"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return doc.Shield.Lists.Files, nil
}
