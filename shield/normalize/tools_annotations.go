package normalize

import (
	"context"
	"strings"
)

// MCP tool annotations (MCP specification, Tool.annotations: readOnlyHint, destructiveHint,
// idempotentHint, openWorldHint) for tools the catalog does not know.
//
// The channel: annotations are part of a tool's definition (tools/list), not of a call, so the
// proxy in front of an MCP server — not the agent — passes them with every call it forwards, as
// call labels "mcp.readOnlyHint", "mcp.destructiveHint", "mcp.idempotentHint" and
// "mcp.openWorldHint" with the values "true" or "false" (anything else is ignored). The pipeline
// hands the labels to the normaliser in the context (WithLabels); rules and policies read the same
// labels in input.context.labels.
//
// Annotations are the server's word, not a proof. They only ever add effects: a tool that says it
// may destroy, write or reach the open world gets an unresolved effect saying so (so it is never
// allowed without review), and its arguments are still read like any unknown tool's. A tool that
// says it only reads gets no extra effect; the bundle may allow it when every effect found in its
// arguments is a read of the workspace (rego: mcp.read-only-annotated). With no annotation label at
// all nothing is added: an unknown tool escalates anyway.

// Label names of the MCP annotations. They are API (proxies set them, rules read them).
const (
	LabelMCPReadOnly    = "mcp.readOnlyHint"
	LabelMCPDestructive = "mcp.destructiveHint"
	LabelMCPIdempotent  = "mcp.idempotentHint"
	LabelMCPOpenWorld   = "mcp.openWorldHint"
)

// DetailMCPAnnotation prefixes the detail of effects that come from annotations
// ("mcp:destructiveHint").
const DetailMCPAnnotation = "mcp:"

// OpenWorldTarget is the target of the connect effect of an open-world tool: a host the tool
// chooses, unknown to Shield.
const OpenWorldTarget = "(open world)"

type labelsKey struct{}

// WithLabels returns ctx carrying the call's labels for NormalizeContext (the MCP annotations a
// proxy passes). The map is read, never changed.
func WithLabels(ctx context.Context, labels map[string]string) context.Context {
	if len(labels) == 0 {
		return ctx
	}
	return context.WithValue(ctx, labelsKey{}, labels)
}

// annotations are the hints a proxy passed; nil fields were not given.
type annotations struct {
	readOnly, destructive, openWorld *bool
}

func (a annotations) any() bool {
	return a.readOnly != nil || a.destructive != nil || a.openWorld != nil
}

func annotationsFrom(ctx context.Context) annotations {
	var a annotations
	if ctx == nil {
		return a
	}
	labels, _ := ctx.Value(labelsKey{}).(map[string]string)
	hint := func(name string) *bool {
		switch strings.ToLower(strings.TrimSpace(labels[name])) {
		case "true":
			t := true
			return &t
		case "false":
			f := false
			return &f
		}
		return nil
	}
	a.readOnly = hint(LabelMCPReadOnly)
	a.destructive = hint(LabelMCPDestructive)
	a.openWorld = hint(LabelMCPOpenWorld)
	return a
}

// annotationEffects adds the effects an unknown tool's annotations declare, with the defaults of
// the MCP specification for hints not given: readOnlyHint false, destructiveHint true (meaningful
// only when not read-only), openWorldHint true.
func (s *state) annotationEffects(a annotations) {
	if !a.any() {
		return
	}
	tool := s.act.Tool
	readOnly := a.readOnly != nil && *a.readOnly
	destructive := a.destructive == nil || *a.destructive
	openWorld := a.openWorld == nil || *a.openWorld
	if !readOnly {
		if destructive {
			s.addToolEffect(Effect{Kind: EffectDelete, Target: DetailMCPAnnotation + tool, Program: tool,
				Detail: DetailMCPAnnotation + "destructiveHint", Unresolved: true})
		} else {
			s.addToolEffect(Effect{Kind: EffectWrite, Target: DetailMCPAnnotation + tool, Program: tool,
				Detail: DetailMCPAnnotation + "readOnlyHint=false", Unresolved: true})
		}
	}
	if openWorld {
		s.addToolEffect(Effect{Kind: EffectConnect, Target: OpenWorldTarget, Program: tool,
			Detail: DetailMCPAnnotation + "openWorldHint", Unresolved: true})
		// What an open-world tool is given may leave with it: a secret among its arguments is
		// carried out.
		for _, str := range s.act.Strings {
			if secretTextRE.MatchString(str) {
				s.addToolEffect(Effect{Kind: EffectSecret, Target: tool, Program: tool, Detail: DetailContent})
				break
			}
		}
	}
	if len(s.act.Unresolved) < s.n.opt.MaxStrings {
		switch {
		case !readOnly && openWorld:
			s.act.Unresolved = append(s.act.Unresolved, "what "+tool+" changes and where it connects (MCP annotations)")
		case !readOnly:
			s.act.Unresolved = append(s.act.Unresolved, "what "+tool+" changes (MCP annotations)")
		case openWorld:
			s.act.Unresolved = append(s.act.Unresolved, "where "+tool+" connects (MCP annotations)")
		}
	}
}
