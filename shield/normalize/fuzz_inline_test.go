package normalize

import (
	"strings"
	"testing"
)

// FuzzInlineAnalyse feeds arbitrary code to the tokenizer and analyser of every language: no
// input may panic or run unbounded, a confined verdict has no reason and no command literal,
// and code over the size bound is never confined. Seeds: the unit tests' code.
func FuzzInlineAnalyse(f *testing.F) {
	al := inlineTestList(f)
	seeds := []string{
		`import json,sys; print(json.load(sys.stdin)["version"])`,
		`from os import system as r; r('id')`,
		`getattr(__builtins__,'ex'+'ec')(bytes.fromhex('41').decode())`,
		`print(f"{2**10:>8} {'x'!r} {d["k"]}")`,
		"console.log(`${process.version} ${`${1}`}`)",
		`globalThis['ev'+'al'](atob('eA=='))`,
		`const {a: b, c} = require('fs'); import x from 'y'`,
		`s{a}{b}ge; tr/a-z/A-Z/; print "@{[ 1 ]}" if /(?{ 1 })/; <STDIN>; qx(id)`,
		`my %h; $h{$_}++ for split /,/; print join(",", sort keys %h), "\n"`,
		`puts "#{x}" if $_ =~ /#{y}/; %x(id); %w[a b]; :sym; ?a; [1].each(&:to_s)`,
		`load(string.char(111,115))() --[==[ c ]==] [[ s ]]`,
		"println(\"v$(VERSION) $x\"); run(`id`); @show 1; r\"x\"",
		"x <- c(1); `system`(\"id\"); base:::f; a %in% b; r\"(raw)\"",
		`echo "{$f('id')}"; $x->m(); X::y(); <<<EOT`,
		"\x00\xff'\"`",
	}
	progs := []string{"python3", "node", "perl", "ruby", "lua", "julia", "Rscript", "php"}
	for _, s := range seeds {
		for i := range progs {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, code string) {
		prog := progs[int(which)%len(progs)]
		v := al.Analyse(prog, code)
		if v.Confined {
			if v.Reason != "" {
				t.Fatalf("confined with a reason %q", v.Reason)
			}
			if len(code) > maxInlineCode {
				t.Fatalf("code of %d bytes confined", len(code))
			}
			toks, err := lexInline(al.language(prog).name, code)
			if err != nil {
				t.Fatalf("confined although the lexer failed: %v", err)
			}
			for _, tk := range toks {
				if tk.kind == tCmd {
					t.Fatalf("confined with a command literal %q", tk.text)
				}
			}
		} else if !strings.HasPrefix(v.Field(), "capable: ") || v.Reason == "" {
			t.Fatalf("capable without a reason: %q", v.Field())
		}
		if len(v.Reads) > 16 {
			t.Fatalf("%d reads recorded", len(v.Reads))
		}
	})
}
