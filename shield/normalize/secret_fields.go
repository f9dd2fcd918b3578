package normalize

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Secret-shaped data in structured fields. A request, a page or a message carries a credential
// when one of its fields is named for one and holds a key-shaped value ({"aws_secret_access_key":
// "wJalr…"}, a form field "api_key", a query parameter "client_secret"), or when a value has the
// shape of a credential even slightly off its exact format (a cloud key id AKIA… of 12–20
// characters, "id:secret" pairs, recovery or backup codes announced as such). The key name is
// evidence even when the value's format is not exact: an attacker alters one character to slip past
// a format list, but must still tell the receiver what the value is, or send something shaped
// like one.
//
// Effects: a secret of detail "request" for a request or a page (effects.secret-in-request judges
// it against the allowed egress: a token sent to the configured API is the API's business), a
// secret of DetailContent for a message (an outside recipient; effects.secret-egress).
//
// Reviewable data: secretFieldKeyRE, secretFieldBenignRE, nearCloudKeyRE, recoveryCodesRE.

// secretFieldKeyRE: a field name that names a credential.
var secretFieldKeyRE = regexp.MustCompile(`(?i)(secret|passw(or)?d|passwd|passphrase|api[_-]?key|apikey|access[_-]?key|private[_-]?key|token|credential|bearer|session[_-]?id|cookie|mnemonic|seed[_-]?phrase)`)

// secretFieldBenignRE: field names that speak of a credential without holding one (counts,
// limits, kinds, where it lives).
var secretFieldBenignRE = regexp.MustCompile(`(?i)(count|limit|max|min|usage|type|kind|expir|ttl|url|uri|endpoint|length|size|path|file|name|format|hint|header|field|label|policy|rotation|created|updated|prompt|budget)`)

// nearCloudKeyRE: a cloud access key id near its format (AKIA + 12–20 upper-case letters or
// digits; exact ones are in the catalog's credential formats).
var nearCloudKeyRE = regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ABIA|ACCA)[0-9A-Z]{12,20}\b`)

// recoveryCodesRE: text that announces recovery, backup or one-time codes; recoveryCodeRE: one code.
var recoveryCodesRE = regexp.MustCompile(`(?i)\b(?:backup|recovery|2fa|mfa|one[- ]time|otp|scratch|emergency|seed)\b[^.\n]{0,30}\b(?:codes?|phrase|words)\b`)
var recoveryCodeRE = regexp.MustCompile(`\b[0-9a-zA-Z]{4,6}[- ][0-9a-zA-Z]{4,6}\b|\b[0-9]{6,10}\b`)

// Bounds of the keyed walk.
const (
	maxFieldLeaves = 128
	maxFieldDepth  = 8
)

// secretFieldClasses: classes whose fields leave the host.
var secretFieldClasses = set(ClassNetRequest, ClassBrowser, ClassMessageSend)

// secretFieldEffects adds the secret effects of secret-named or secret-shaped fields of a call
// whose fields leave the host.
func (s *state) secretFieldEffects() {
	a := s.act
	if !secretFieldClasses[a.Class] {
		return
	}
	detail := "request"
	if a.Class == ClassMessageSend {
		detail = DetailContent
	}
	found := ""
	leaves := 0
	var walk func(key string, v any, depth int)
	walk = func(key string, v any, depth int) {
		if found != "" || leaves >= maxFieldLeaves {
			return
		}
		if depth > maxFieldDepth {
			s.act.Truncated = true // fails closed: general.truncated escalates
			return
		}
		switch x := v.(type) {
		case string:
			leaves++
			if t := secretFieldText(key, x); t != "" {
				found = t
			}
		case []any:
			for _, e := range x {
				walk(key, e, depth+1)
			}
		case map[string]any:
			ks := make([]string, 0, len(x))
			for k := range x {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				walk(k, x[k], depth+1)
			}
		}
	}
	walk("", map[string]any(a.Args), 0)
	if found == "" {
		for _, u := range a.URLs {
			if u.Role == URLText || u.Query == "" || len(u.Query) > maxDataScan {
				continue
			}
			q, err := url.ParseQuery(u.Query)
			if err != nil {
				continue
			}
			for k, vs := range q {
				for _, v := range vs {
					if t := secretFieldText(k, v); t != "" && found == "" {
						found = t
					}
				}
			}
		}
	}
	if found == "" {
		return
	}
	s.addToolEffect(Effect{Kind: EffectSecret, Target: a.Tool + " field " + found, Detail: detail, Sensitive: true})
	if a.Class == ClassMessageSend {
		s.textSendEffect()
	}
}

// secretFieldText: the reason a field (key, value) carries a credential, or "".
func secretFieldText(key, v string) string {
	if len(v) > maxDataScan {
		v = v[:maxDataScan]
	}
	if nearCloudKeyRE.MatchString(v) {
		return "cloud key id"
	}
	if recoveryCodesRE.MatchString(v) && len(recoveryCodeRE.FindAllString(v, 3)) >= 2 {
		return "recovery codes"
	}
	if key == "" || len(key) > 64 || !secretFieldKeyRE.MatchString(key) || secretFieldBenignRE.MatchString(key) {
		return ""
	}
	v = strings.TrimSpace(v)
	if len(v) < 12 || len(v) > 4096 || strings.ContainsAny(v, " \t\n") || !secretShaped(v) {
		return ""
	}
	if len(key) > 40 {
		key = key[:40]
	}
	return key
}
