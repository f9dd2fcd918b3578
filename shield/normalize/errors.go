package normalize

import (
	"errors"
	"fmt"
)

// ErrInvalidArguments is wrapped by every error DecodeArguments returns. The pipeline maps it to a
// BLOCK with the error's message as the reason (the message names the problem and where it is).
var ErrInvalidArguments = errors.New("invalid arguments")

// ErrCommandSpecs is wrapped by every error ParseCommandSpecs returns.
var ErrCommandSpecs = errors.New("command specs")

// ErrCatalog is wrapped by every error ParseCatalog returns.
var ErrCatalog = errors.New("invalid tool catalog")

// ArgumentsError says what is wrong with a call's arguments and where (a JSONPath-like location
// such as "$.a.b[2]"). errors.Is(err, ErrInvalidArguments) holds for it.
type ArgumentsError struct {
	Path   string // "$" for the whole document
	Reason string
}

func (e *ArgumentsError) Error() string {
	if e.Path == "" {
		return "arguments: " + e.Reason
	}
	return fmt.Sprintf("arguments: %s at %s", e.Reason, e.Path)
}

// Is reports whether target is ErrInvalidArguments.
func (e *ArgumentsError) Is(target error) bool { return target == ErrInvalidArguments }

// CatalogError lists every problem found in a catalog file, each as "file:line: message".
// errors.Is(err, ErrCatalog) holds for it.
type CatalogError struct {
	Problems []string
}

func (e *CatalogError) Error() string {
	if len(e.Problems) == 1 {
		return "tool catalog: " + e.Problems[0]
	}
	s := fmt.Sprintf("tool catalog: %d problems:", len(e.Problems))
	for _, p := range e.Problems {
		s += "\n\t" + p
	}
	return s
}

// Is reports whether target is ErrCatalog.
func (e *CatalogError) Is(target error) bool { return target == ErrCatalog }
