package server

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	_ "github.com/shieldsec/shield/proto/shield/v1" // registers the descriptors the document refers to
)

// openapiDoc is the hand-written part of the OpenAPI document: paths, HTTP-only schemas. The
// schemas of proto messages (components.schemas["shield.v1.X"]) are generated from the proto
// descriptors, so the document's response bodies follow the proto as it changes.
//
//go:embed openapi.json
var openapiDoc []byte

var openapiCache struct {
	once sync.Once
	doc  map[string]any
	err  error
}

// OpenAPI returns the OpenAPI document of the built-in routes (a fresh copy).
func OpenAPI() (map[string]any, error) {
	openapiCache.once.Do(func() {
		var doc map[string]any
		if err := json.Unmarshal(openapiDoc, &doc); err != nil {
			openapiCache.err = fmt.Errorf("openapi.json: %w", err)
			return
		}
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		refs := map[string]bool{}
		collectRefs(doc, refs)
		for ref := range refs {
			name, ok := strings.CutPrefix(ref, "#/components/schemas/")
			if !ok || !strings.HasPrefix(name, "shield.v1.") {
				continue
			}
			if err := addMessageSchema(schemas, protoreflect.FullName(name)); err != nil {
				openapiCache.err = err
				return
			}
		}
		openapiCache.doc = doc
	})
	if openapiCache.err != nil {
		return nil, openapiCache.err
	}
	var cp map[string]any
	b, _ := json.Marshal(openapiCache.doc)
	_ = json.Unmarshal(b, &cp)
	return cp, nil
}

func collectRefs(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				out[s] = true
			}
			collectRefs(e, out)
		}
	case []any:
		for _, e := range x {
			collectRefs(e, out)
		}
	}
}

// addMessageSchema adds the schema of a proto message (and the messages it holds) in its
// protojson form with proto field names.
func addMessageSchema(schemas map[string]any, name protoreflect.FullName) error {
	if _, ok := schemas[string(name)]; ok {
		return nil
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return fmt.Errorf("openapi: %s: %w", name, err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return fmt.Errorf("openapi: %s is not a message", name)
	}
	props := map[string]any{}
	s := map[string]any{"type": "object", "properties": props, "description": "protojson of " + string(name)}
	schemas[string(name)] = s
	fields := md.Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		var fs map[string]any
		switch {
		case f.IsMap():
			vs, err := fieldSchema(schemas, f.MapValue())
			if err != nil {
				return err
			}
			fs = map[string]any{"type": "object", "additionalProperties": vs}
		case f.IsList():
			es, err := fieldSchema(schemas, f)
			if err != nil {
				return err
			}
			fs = map[string]any{"type": "array", "items": es}
		default:
			if fs, err = fieldSchema(schemas, f); err != nil {
				return err
			}
		}
		props[string(f.Name())] = fs
	}
	return nil
}

func fieldSchema(schemas map[string]any, f protoreflect.FieldDescriptor) (map[string]any, error) {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return map[string]any{"type": "boolean"}, nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return map[string]any{"type": "integer"}, nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// protojson writes 64-bit integers as decimal strings.
		return map[string]any{"type": "string", "format": "int64", "pattern": "^-?[0-9]+$"}, nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return map[string]any{"type": "number"}, nil
	case protoreflect.StringKind:
		return map[string]any{"type": "string"}, nil
	case protoreflect.BytesKind:
		return map[string]any{"type": "string", "contentEncoding": "base64"}, nil
	case protoreflect.EnumKind:
		vals := f.Enum().Values()
		var names []any
		for i := range vals.Len() {
			names = append(names, string(vals.Get(i).Name()))
		}
		return map[string]any{"type": "string", "enum": names}, nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		m := f.Message().FullName()
		if m == "google.protobuf.Timestamp" {
			return map[string]any{"type": "string", "format": "date-time"}, nil
		}
		if err := addMessageSchema(schemas, m); err != nil {
			return nil, err
		}
		return map[string]any{"$ref": "#/components/schemas/" + string(m)}, nil
	}
	return nil, fmt.Errorf("openapi: field %s: kind %s", f.FullName(), f.Kind())
}

// openapi serves the document, with the extra routes' paths added.
func (h *HTTP) openapi(w http.ResponseWriter, r *http.Request) error {
	doc, err := OpenAPI()
	if err != nil {
		return err
	}
	paths := doc["paths"].(map[string]any)
	for _, x := range h.o.Routes {
		method, path, ok := strings.Cut(x.Pattern, " ")
		if !ok {
			continue
		}
		p, _ := paths[path].(map[string]any)
		if p == nil {
			p = map[string]any{}
			paths[path] = p
		}
		p[strings.ToLower(method)] = map[string]any{"summary": x.Summary, "x-grpc-method": x.Method,
			"responses": map[string]any{"default": map[string]any{"description": "see the route's documentation"}}}
	}
	writeJSON(w, http.StatusOK, doc)
	return nil
}
