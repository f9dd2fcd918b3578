package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// DecodeYAML decodes one YAML document strictly into v: unknown fields, duplicate keys and
// trailing documents are errors. Every problem is returned with file:line.
func DecodeYAML(file string, data []byte, v any) Problems {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) {
		return Problems{{File: file, Msg: "empty document"}}
	}
	if err != nil {
		return YAMLProblems(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return YAMLProblems(file, err)
		}
		return Problems{{File: file, Line: extra.Line, Msg: "more than one YAML document"}}
	}
	return nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// YAMLProblems turns a yaml.v3 error (a syntax error or a *yaml.TypeError listing several
// problems) into Problems with the line numbers the parser gave.
func YAMLProblems(file string, err error) Problems {
	var te *yaml.TypeError
	var msgs []string
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	out := make(Problems, 0, len(msgs))
	for _, m := range msgs {
		p := Problem{File: file, Msg: m}
		if sm := yamlLine.FindStringSubmatch(m); sm != nil {
			p.Line, _ = strconv.Atoi(sm[1])
			p.Msg = sm[2]
		} else if len(m) > 6 && m[:6] == "yaml: " {
			p.Msg = m[6:]
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		out = append(out, Problem{File: file, Msg: fmt.Sprint(err)})
	}
	return out
}
