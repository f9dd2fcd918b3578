package audit

import (
	"encoding/json"
	"errors"
)

// Redactor redacts call arguments exactly as the log redacts a decision's, for the other
// records that hold a call's arguments (approval requests, their notices and API views): one
// redaction for every record type.
type Redactor struct{ r *redactor }

// NewRedactor compiles c (the zero value redacts with the built-in patterns).
func NewRedactor(c Redaction) (*Redactor, error) {
	r, err := c.compile()
	if err != nil {
		return nil, err
	}
	return &Redactor{r: r}, nil
}

// RedactedArgs is the result of Redactor.Arguments.
type RedactedArgs struct {
	// Arguments is the redacted RFC 8785 form (nil when Invalid).
	Arguments json.RawMessage
	// Hash is the hex SHA-256 of the original arguments' RFC 8785 form (of the raw bytes when
	// Invalid), as in a decision's args_hash.
	Hash string
	// Paths are the JSON pointers of the replaced values, sorted.
	Paths []string
	// Invalid is set when the arguments were not valid JSON: they are dropped, never stored.
	Invalid bool
}

// Arguments redacts args. It never returns the original bytes of an invalid document.
func (x *Redactor) Arguments(args json.RawMessage) (RedactedArgs, error) {
	if x == nil || x.r == nil {
		return RedactedArgs{}, errors.New("redact arguments: no redactor")
	}
	d, err := x.r.prepare(&Decision{Arguments: args})
	if err != nil {
		return RedactedArgs{}, err
	}
	return RedactedArgs{Arguments: d.Arguments, Hash: d.ArgsHash, Paths: d.Redacted, Invalid: d.ArgsInvalid}, nil
}
