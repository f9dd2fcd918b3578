package normalize

import "strings"

// pipedCode returns the code an interpreter at pipeline stage idx reads from its standard input
// when the previous stage writes only literal text (echo 'code' | python3, printf 'code\n' |
// node), so that it is judged like -c/-e code. Anything else (a download, a decoder, a file of
// unknown content, a format with directives) is not literal code: ok is false.
func (w *walker) pipedCode(f frame, idx int) (string, bool) {
	if idx == 0 {
		return "", false
	}
	cmds := w.s.act.Commands
	for k := len(cmds) - 1; k >= 0; k-- {
		c := cmds[k]
		if c.Depth != f.depth || !c.Pipe || c.PipeIndex != idx-1 {
			continue
		}
		if c.Dynamic {
			return "", false
		}
		args := c.Args
		switch c.Name {
		case "echo":
			escapes := false
			for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
				escapes = escapes || strings.Contains(args[0], "e")
				args = args[1:]
			}
			code := strings.Join(args, " ")
			if escapes {
				code = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(code)
			}
			return code, true
		case "printf":
			if len(args) != 1 || strings.Contains(args[0], "%") || strings.Contains(args[0], `\x`) || strings.Contains(args[0], `\0`) {
				return "", false
			}
			return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(args[0]), true
		}
		return "", false
	}
	return "", false
}
