package normalize

import (
	"regexp"
	"strings"
)

// Secrets typed into a page. A browser, computer-use or form tool that types or fills text into a
// field described as a password, passphrase, token, key or one-time code, or types a value shaped
// like a chosen password, hands a credential to whatever page is open: a secret of detail
// DetailTyped (request_targets.rego escalates: a human decides whether that page should have it).

// DetailTyped is the detail of a secret typed into a page or form. It is API.
const DetailTyped = "typed"

// secretFieldRE: a field, element or selector described as holding a credential.
var secretFieldRE = regexp.MustCompile(`(?i)pass(?:word|wd|phrase|code)|\bpwd\b|\bpin\b|\botp\b|one[- ]time|\b2fa\b|\bmfa\b|totp|verification code|auth(?:entication)? code|token|api[ _-]?key|secret|credential|card[ _-]?number|\bcvc\b|\bcvv\b|type=["']?password`)

// typedTextKeys and fieldKeys: the argument keys of what is typed and of where it goes.
var (
	typedTextKeys = set("text", "value", "keys", "input", "string", "content", "fill", "data")
	fieldKeys     = set("element", "selector", "label", "field", "name", "placeholder", "locator", "target", "description",
		"aria_label", "arialabel", "id", "ref", "field_name", "fieldname", "xpath")
)

// maxTypedDepth bounds the walk over nested form fields (fill_form {fields: [{name, value}]}).
const maxTypedDepth = 4

// typedSecretEffects adds a typed secret for each typed value that goes to a credential field or
// is shaped like a password.
func (s *state) typedSecretEffects() {
	a := s.act
	tool := strings.ToLower(a.Tool)
	if !(a.Class == ClassBrowser || typingToolRE.MatchString(tool) || typingAction(a.Args)) || a.Class == ClassMessageSend {
		return
	}
	var walk func(m map[string]any, depth int)
	walk = func(m map[string]any, depth int) {
		if depth > maxTypedDepth {
			return
		}
		field, described := "", false
		var texts []string
		for k, v := range m {
			lk := strings.ToLower(k)
			switch x := v.(type) {
			case string:
				if typedTextKeys[lk] && strings.TrimSpace(x) != "" {
					texts = append(texts, x)
				}
				if fieldKeys[lk] && lk != "ref" && lk != "id" && strings.TrimSpace(x) != "" {
					described = true
				}
				if fieldKeys[lk] && secretFieldRE.MatchString(x) && len(x) <= 256 {
					field = x
				}
			case map[string]any:
				walk(x, depth+1)
			case []any:
				for _, e := range x {
					if em, ok := e.(map[string]any); ok {
						walk(em, depth+1)
					}
				}
			}
		}
		for _, t := range texts {
			// A value shaped like a password counts where no field is described; a field
			// described as something else (a project name) is trusted.
			if field != "" || !described && passwordShaped(t) {
				where := field
				if where == "" {
					where = "a page"
				}
				s.addToolEffect(Effect{Kind: EffectSecret, Target: "typed into " + where, Detail: DetailTyped, Sensitive: true})
				return
			}
		}
	}
	walk(a.Args, 0)
}

// passwordShaped: one word of 8 to 64 characters shaped like a chosen password (strongSecret), no
// whitespace.
func passwordShaped(t string) bool {
	t = strings.TrimSpace(t)
	return len(t) >= 8 && len(t) <= 64 && !strings.ContainsAny(t, " \t\n") && strongSecret(t)
}
