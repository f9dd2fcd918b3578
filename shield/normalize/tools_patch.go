package normalize

import "strings"

// The apply_patch format read the way Codex's own parser reads it (codex-rs/apply-patch,
// lenient mode), so that a patch cannot name one file to Shield and another to Codex:
//   - the whole text is trimmed; it may be wrapped in a here-document (`<<EOF`, `<<'EOF'`,
//     `<<"EOF"` first line, a last line ending in EOF);
//   - the first and last lines, trimmed, must be "*** Begin Patch" and "*** End Patch";
//   - a file operation's header line is trimmed before its marker is looked for, so
//     " *** Add File: x" (leading space) is a header; the path is the rest of the trimmed line;
//   - an Add File body is the following lines that start with '+';
//   - an Update File may be followed directly (untrimmed) by "*** Move to: path";
//   - an update's chunks run until a line starting with '*', or, after the first line of a chunk,
//     a line starting with anything but ' ', '+', '-' or "@@" (that line starts the next header).
// When Codex would refuse the patch, every trimmed line that carries a file marker is taken
// instead: what Shield reads is then a superset of what any lenient reader could apply.

const (
	patchAdd    = "add"
	patchDelete = "delete"
	patchUpdate = "update"
)

type patchOp struct {
	kind   string
	path   string
	moveTo string
}

var patchMarkers = []struct{ marker, kind string }{
	{"*** Add File: ", patchAdd}, {"*** Delete File: ", patchDelete}, {"*** Update File: ", patchUpdate},
}

// parseCodexPatch returns the file operations of an apply_patch document.
func parseCodexPatch(doc string) []patchOp {
	lines := strings.Split(strings.TrimSpace(doc), "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	body, ok := patchBody(lines)
	if ok {
		if ops, ok := parsePatchOps(body); ok {
			return ops
		}
	}
	return scanPatchOps(lines)
}

// patchBody returns the lines between the begin and end markers.
func patchBody(lines []string) ([]string, bool) {
	strict := func(ls []string) ([]string, bool) {
		if len(ls) < 2 || strings.TrimSpace(ls[0]) != "*** Begin Patch" || strings.TrimSpace(ls[len(ls)-1]) != "*** End Patch" {
			return nil, false
		}
		return ls[1 : len(ls)-1], true
	}
	if b, ok := strict(lines); ok {
		return b, true
	}
	if len(lines) >= 4 {
		switch lines[0] {
		case "<<EOF", "<<'EOF'", `<<"EOF"`:
			if strings.HasSuffix(lines[len(lines)-1], "EOF") {
				return strict(lines[1 : len(lines)-1])
			}
		}
	}
	return nil, false
}

func patchHeader(line string) (kind, p string) {
	t := strings.TrimSpace(line)
	for _, m := range patchMarkers {
		if strings.HasPrefix(t, m.marker) {
			return m.kind, t[len(m.marker):]
		}
	}
	return "", ""
}

// parsePatchOps walks the body; ok is false where Codex would refuse the patch.
func parsePatchOps(body []string) ([]patchOp, bool) {
	var ops []patchOp
	for i := 0; i < len(body); {
		kind, p := patchHeader(body[i])
		if kind == "" {
			return nil, false
		}
		i++
		op := patchOp{kind: kind, path: p}
		switch kind {
		case patchAdd:
			for i < len(body) && strings.HasPrefix(body[i], "+") {
				i++
			}
		case patchUpdate:
			if i < len(body) && strings.HasPrefix(body[i], "*** Move to: ") {
				op.moveTo = body[i][len("*** Move to: "):]
				i++
			}
			chunks := 0
			for i < len(body) {
				if strings.TrimSpace(body[i]) == "" {
					i++
					continue
				}
				if strings.HasPrefix(body[i], "*") {
					break
				}
				n := patchChunk(body[i:], chunks == 0)
				if n == 0 {
					return nil, false
				}
				chunks++
				i += n
			}
			if chunks == 0 {
				return nil, false
			}
		}
		ops = append(ops, op)
	}
	return ops, true
}

// patchChunk returns the number of lines of the update chunk at the start of ls, 0 when invalid.
func patchChunk(ls []string, first bool) int {
	start := 0
	switch {
	case ls[0] == "@@" || strings.HasPrefix(ls[0], "@@ "):
		start = 1
	case !first:
		return 0
	}
	if start >= len(ls) {
		return 0
	}
	n := 0
	for _, l := range ls[start:] {
		if l == "*** End of File" {
			if n == 0 {
				return 0
			}
			n++
			break
		}
		if l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-' {
			n++
			continue
		}
		if n == 0 {
			return 0
		}
		break
	}
	return n + start
}

// scanPatchOps takes every line that, trimmed, carries a file or move marker.
func scanPatchOps(lines []string) []patchOp {
	var ops []patchOp
	for _, l := range lines {
		if kind, p := patchHeader(l); kind != "" && p != "" {
			ops = append(ops, patchOp{kind: kind, path: p})
			continue
		}
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "*** Move to: ") {
			ops = append(ops, patchOp{kind: patchAdd, path: t[len("*** Move to: "):]})
		}
	}
	return ops
}
