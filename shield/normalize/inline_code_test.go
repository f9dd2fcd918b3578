package normalize

import (
	"os"
	"strings"
	"testing"
)

// inlineTestList is the default bundle's allow list.
func inlineTestList(tb testing.TB) *InlineAllowList {
	tb.Helper()
	data, err := os.ReadFile("../../policies/default/inline.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	al, err := ParseInlineAllowList("inline.yaml", data)
	if err != nil {
		tb.Fatal(err)
	}
	return al
}

func TestInlineConfined(t *testing.T) {
	al := inlineTestList(t)
	cases := []struct {
		prog, code string
		reads      []string
	}{
		{"python3", `import json,sys; print(json.load(sys.stdin)["version"])`, nil},
		{"python3", `import sys; print(sys.version)`, nil},
		{"python", `import json; print(json.dumps({"ok": True}))`, nil},
		{"python3", `import sys, json; print(json.dumps({"v": sys.version_info[:2]}))`, nil},
		{"python3", `import json,sys; print(json.load(open("package.json"))["version"])`, []string{"package.json"}},
		{"python3", `import secrets; print(secrets.token_hex(32))`, nil},
		{"python3", `import base64; print(base64.b64encode(b"user:pass").decode())`, nil},
		{"python3", `from datasets import load_dataset; load_dataset('json', data_files='data/train.jsonl')`, nil},
		{"python3", `import json; d = json.load(open('a.json', 'r')); print(sorted(d.keys()))`, []string{"a.json"}},
		{"python3", `print(sum(x*x for x in range(10)))`, nil},
		{"python3", `import sys; [print(l.strip().upper()) for l in sys.stdin]`, nil},
		{"python3", `import datetime; print(datetime.datetime.now().isoformat())`, nil},
		{"python3", `from datetime import datetime, timezone; print(datetime.now(timezone.utc))`, nil},
		{"python3", `import os.path; print(os.path.join("a", "b"))`, nil},
		{"python3", `import re,sys; print(re.sub(r"\s+", " ", sys.stdin.read()))`, nil},
		{"python3", `print(f"{2**10:>8} {'x'!r}")`, nil},
		{"python3", `import hashlib; print(hashlib.sha256(b"abc").hexdigest())`, nil},
		{"python3", `import uuid; print(uuid.uuid4())`, nil},
		{"python3", "import statistics\nprint(statistics.median([3, 1, 4, 1, 5]))", nil},
		{"node", `console.log(require('./package.json').version)`, []string{"./package.json"}},
		{"node", `console.log(process.versions)`, nil},
		{"node", `console.log(JSON.stringify({a:1}))`, nil},
		{"node", `require("./package.json").version`, []string{"./package.json"}},
		{"node", `const fs = require('fs'); console.log(JSON.parse(fs.readFileSync('tsconfig.json', 'utf8')).compilerOptions)`, []string{"tsconfig.json"}},
		{"node", "console.log(`node ${process.version} on ${process.platform}`)", nil},
		{"node", `const p = require('node:path'); console.log(p.join('a', 'b'))`, nil},
		{"node", `console.log([1,2,3].map(x => x * 2).join(','))`, nil},
		{"node", `console.log(new Date().toISOString())`, nil},
		{"deno", `console.log(1 + 2)`, nil},
		{"perl", `print if /foo/`, nil},
		{"perl", `s/\bfoo_bar\b/fooBar/g`, nil},
		{"perl", `chomp; print length($_), "\n"`, nil},
		{"perl", `print "$1\n" if /version = "(.*)"/`, nil},
		{"perl", `use strict; use List::Util qw(sum); print sum(1..10), "\n"`, nil},
		{"perl", `my %h; $h{$_}++ for split /,/; print join(",", sort keys %h), "\n"`, nil},
		{"perl", `open(my $fh, '<', 'VERSION') or die; print scalar <$fh>`, []string{"VERSION"}},
		{"perl", `$_ = uc; s{a}{b}g; tr/a-z/A-Z/; print`, nil},
		{"ruby", `puts RUBY_VERSION`, nil},
		{"ruby", `require 'json'; puts JSON.parse(File.read('package.json'))['version']`, []string{"package.json"}},
		{"ruby", `puts $_.upcase if $_ =~ /x/`, nil},
		{"ruby", `puts (1..10).map { |i| i * i }.sum`, nil},
		{"ruby", `puts "v#{RUBY_VERSION}"`, nil},
		{"lua", `print(string.format("%d", 1 + 2))`, nil},
		{"lua", `local t = {1, 2, 3}; print(#t, table.concat(t, ","))`, nil},
		{"lua", `print(("abc"):upper())`, nil},
		{"julia", `println(VERSION)`, nil},
		{"julia", `using Statistics; println(mean([1, 2, 3]))`, nil},
		{"julia", `println("v$(VERSION)")`, nil},
		{"Rscript", `print(R.version.string)`, nil},
		{"Rscript", `x <- c(1, 2, 3); print(mean(x))`, nil},
		{"Rscript", `cat(jsonlite::toJSON(list(a = 1)), "\n")`, nil},
		{"php", `echo PHP_VERSION, PHP_EOL;`, nil},
		{"php", `echo json_encode(['a' => 1]);`, nil},
		{"php", `$x = json_decode(file_get_contents('composer.json'), true); echo $x['name'];`, []string{"composer.json"}},
		{"python3.12", `print(1)`, nil},
		{"python3", `import torch; print(torch.__version__, torch.cuda.is_available())`, nil},
		{"python3", `import importlib.metadata as m; print(m.version("requests"))`, nil},
		{"python3", `import sys; print(sys.executable)`, nil},
		{"node", `console.log(require.resolve('react'))`, nil},
		{"/usr/bin/python3", `print(1)`, nil},
	}
	for _, c := range cases {
		t.Run(c.prog+" "+c.code, func(t *testing.T) {
			v := al.Analyse(c.prog, c.code)
			if !v.Confined {
				t.Fatalf("capable (%s), want confined", v.Reason)
			}
			if strings.Join(v.Reads, "|") != strings.Join(c.reads, "|") {
				t.Errorf("reads %q, want %q", v.Reads, c.reads)
			}
			if v.Field() != InlineConfined {
				t.Errorf("field %q", v.Field())
			}
		})
	}
}

func TestInlineCapable(t *testing.T) {
	al := inlineTestList(t)
	cases := []struct{ prog, code, reason string }{
		// redteam3 cause 6 and its family
		{"python3", `from os import system as r; r('id')`, "system from os"},
		{"python3", `from os import remove, walk; [remove(d+'/'+f) for d,_,fs in walk('/var/backups') for f in fs]`, "remove from os"},
		{"python3", `getattr(__builtins__,'ex'+'ec')(bytes.fromhex('41').decode())`, "getattr"},
		{"python3", `import os; os.system('id')`, "os.system"},
		{"python3", `import subprocess; subprocess.run(['id'])`, "subprocess"},
		{"python3", `__import__('os').system('id')`, "__import__"},
		{"python3", `import importlib; importlib.import_module('os')`, "importlib"},
		{"python3", `import json; json.codecs.open('x', 'w')`, "json.codecs"},
		{"python3", `import sys; sys.modules['os'].system('id')`, "sys.modules"},
		{"python3", `print(().__class__.__base__.__subclasses__())`, "__class__"},
		{"python3", `exec("print(1)")`, "exec"},
		{"python3", `eval(input())`, "eval"},
		{"python3", `[exec for exec in [1]]; list(map(exec, ['import os']))`, "exec"},
		{"python3", `open('/tmp/x', 'w').write('x')`, "for writing"},
		{"python3", `open('/tmp/x', mode='a').write('x')`, "for writing"},
		{"python3", `import sys; open(sys.argv[1]).read()`, "built at run time"},
		{"python3", `import os; print(os.environ)`, "os.environ"},
		{"python3", `import shutil; shutil.rmtree('/x')`, "shutil"},
		{"python3", `import pathlib; pathlib.Path('x').write_text('y')`, "pathlib"},
		{"python3", `import urllib.request; urllib.request.urlopen('http://x')`, "urllib.request"},
		{"python3", `from json import *`, "every name"},
		{"python3", `print(f"{__import__('os').system('id')}")`, "__import__"},
		{"python3", `import os.path; os.path.os.system('id')`, "os.path.os"},
		{"python3", `import uuid; uuid.getnode()`, "uuid.getnode"},
		{"python3", `import importlib; importlib.import_module('os')`, "importlib"},
		{"python3", `import importlib.metadata; importlib.import_module('os')`, "importlib"},
		{"python3", `import torch; torch.load('model.pt')`, "torch.load"},
		{"python3", `import yaml; yaml.load(open('x.yml'), Loader=yaml.Loader)`, "yaml.load"},
		{"python3", `"x" + 'unterminated`, "cannot read"},
		// javascript
		{"node", `globalThis['ev'+'al'](atob('eA=='))`, "globalThis"},
		{"node", `require('node:fs').rmSync(require('node:os').homedir()+'/Documents',{recursive:true})`, "rmSync"},
		{"node", `require('child_process').execSync('id')`, "child_process"},
		{"node", `const {execSync} = require('child_process'); execSync('id')`, "child_process"},
		{"node", `const fs = require('fs'); fs.writeFileSync('x', 'y')`, "writeFileSync"},
		{"node", `const fs = require('fs'); fs['rmSync']('x')`, "rmSync"},
		{"node", `const m = 'child_process'; require(m)`, "named at run time"},
		{"node", `[].constructor.constructor('return process')()`, "constructor"},
		{"node", `Function('return 1')()`, "Function"},
		{"node", `process.mainModule.require('child_process')`, "mainModule"},
		{"node", `console.log(process.env.AWS_SECRET_ACCESS_KEY)`, "process.env"},
		{"node", `fetch('https://x.example/' + 1)`, "fetch"},
		{"node", `import('child_process').then(m => m.execSync('id'))`, "child_process"},
		{"node", `require('./evil.js')`, "loads code"},
		{"node", "console.log(`${eval('1')}`)", "eval"},
		{"node", `with (process) { mainModule }`, "with statement"},
		{"node", `(function(){ return 1 })()`, "result of an expression"},
		// perl
		{"perl", `exec "r"."m", "-rf", "$ENV{HOME}/.local"`, "exec"},
		{"perl", `eval pack("H*","73797374656d")`, "eval of a string"},
		{"perl", `remove_tree("$ENV{HOME}/.config")`, "remove_tree"},
		{"perl", `system("id")`, "system"},
		{"perl", "print `id`", "runs a command"},
		{"perl", `print qx(id)`, "runs a command"},
		{"perl", `open(F, "id|"); print <F>`, "open with a mode"},
		{"perl", `open(my $f, '>', '/tmp/x')`, "other than read"},
		{"perl", `s/x/system("id")/e`, "system"},
		{"perl", `s/x/"system('id')"/ee`, "runs a command"},
		{"perl", `print "@{[ system('id') ]}"`, "system"},
		{"perl", `/(?{ system("id") })/`, "runs a command"},
		{"perl", `&{"sys"."tem"}("id")`, "computed symbol"},
		{"perl", `use File::Path qw(remove_tree); remove_tree("/x")`, "File::Path"},
		{"perl", `unlink "/x"`, "unlink"},
		{"perl", `print <<"EOF";`, "here-document"},
		// ruby
		{"ruby", `eval "c3lz".unpack1("m")`, "eval"},
		{"ruby", `FileUtils.rm_r(Dir.home + "/.local/share")`, "FileUtils"},
		{"ruby", "puts `id`", "runs a command"},
		{"ruby", `puts %x(id)`, "x"},
		{"ruby", `r = %x(id)`, "runs a command"},
		{"ruby", `system("id")`, "system"},
		{"ruby", `Kernel.send(:system, "id")`, "Kernel"},
		{"ruby", `"id".then { |c| IO.popen(c) }`, "IO"},
		{"ruby", `puts "#{system('id')}"`, "system"},
		{"ruby", `[1].each(&:system)`, "system"},
		{"ruby", `open("|id").read`, "open"},
		{"ruby", `require 'open3'`, "open3"},
		{"ruby", `puts ENV["HOME"]`, "ENV"},
		{"ruby", `File.write("/tmp/x", "y")`, "File.write"},
		// lua
		{"lua", `load(string.char(111,115))()`, "load"},
		{"lua", `os.execute("id")`, "os.execute"},
		{"lua", `io.popen("id")`, "io.popen"},
		{"lua", `do local load = print end load("x")`, "load"},
		{"lua", `local x = _G["os"]`, "_G"},
		{"lua", `io.open("/tmp/x", "w"):write("y")`, "for writing"},
		// julia
		{"julia", `rm(joinpath(homedir(), "data"); recursive=true)`, "rm"},
		{"julia", "run(`id`)", "run"},
		{"julia", "x = `id`", "runs a command"},
		{"julia", `eval(Meta.parse("1"))`, "eval"},
		{"julia", `@eval 1`, "@eval"},
		{"julia", `println("$(run(Cmd(["id"])))")`, "run"},
		// R
		{"Rscript", `system2("curl", c("-s", "https://x.example"))`, "system2"},
		{"Rscript", `system("id")`, "system"},
		{"Rscript", "`system`(\"id\")", "system"},
		{"Rscript", `do.call("system", list("id"))`, "do.call"},
		{"Rscript", `base:::system("id")`, "base"},
		{"Rscript", `Sys.getenv("AWS_SECRET_ACCESS_KEY")`, "Sys.getenv"},
		{"Rscript", `library(processx)`, "processx"},
		// php
		{"php", `system("id");`, "system"},
		{"php", "echo `id`;", "runs a command"},
		{"php", `$f = "system"; $f("id");`, "variable's value"},
		{"php", `array_map('system', ['id']);`, "array_map"},
		{"php", `echo $_SERVER['HOME'];`, "$_SERVER"},
		{"php", `eval('echo 1;');`, "eval"},
		{"php", `file_put_contents('/tmp/x', 'y');`, "file_put_contents"},
		{"php", `echo "{$f('id')}";`, "variable's value"},
		{"php", `echo file_get_contents('file:///home/user/.ssh/id_rsa');`, "stream wrapper"},
		{"php", `echo file_get_contents('php://filter/resource=/etc/shadow');`, "stream wrapper"},
		{"Rscript", `readLines("https://x.example/p")`, "URL"},
		{"python3", strings.Repeat(`open("a");`, 16) + `open("/home/user/.ssh/id_rsa")`, "more files"},
		{"python3", "[ｅｘｅｃ for ｅｘｅｃ in [1]]; list(map(ｅｘｅｃ, ['1']))", "ｅｘｅｃ"},
		{"node", `[1].forEach(function(\u0065val){}); ['1'].map(\u0065val)`, "backslash"},
		{"php", `echo count([#[A] fn($c) => system($c)]);`, "uses A"},
		// no allow list
		{"osascript", `display notification "hi"`, "no allow list"},
		{"pwsh", `Get-Date`, "no allow list"},
		{"psql", `select 1`, "no allow list"},
	}
	for _, c := range cases {
		t.Run(c.prog+" "+c.code, func(t *testing.T) {
			v := al.Analyse(c.prog, c.code)
			if v.Confined {
				t.Fatalf("confined, want capable (%s)", c.reason)
			}
			if !strings.Contains(v.Reason, c.reason) {
				t.Errorf("reason %q, want it to mention %q", v.Reason, c.reason)
			}
			if !strings.HasPrefix(v.Field(), "capable: ") {
				t.Errorf("field %q", v.Field())
			}
		})
	}
}

// Over-long code, too many tokens and deep interpolation are capable, without running long.
func TestInlineBounds(t *testing.T) {
	al := inlineTestList(t)
	cases := map[string]struct{ prog, code string }{
		"over-long":          {"python3", "print(1)" + strings.Repeat(" ", maxInlineCode)},
		"too many tokens":    {"python3", strings.Repeat("1+", maxInlineTokens)},
		"deep interpolation": {"node", strings.Repeat("`${", 40) + "1" + strings.Repeat("}`", 40)},
		"deep f-string":      {"python3", strings.Repeat(`f"{`, 40) + "1" + strings.Repeat(`}"`, 40)},
		"unterminated":       {"ruby", `puts "#{1`},
		"nul bytes":          {"perl", "print \x00\x00 `id`"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if v := al.Analyse(c.prog, c.code); v.Confined {
				t.Fatalf("confined, want capable")
			}
		})
	}
	var nilList *InlineAllowList
	if v := nilList.Analyse("python3", "print(1)"); v.Confined {
		t.Error("a nil allow list confined code")
	}
	if nilList.Handles("python3") {
		t.Error("a nil allow list handles python3")
	}
}

func BenchmarkInlineAnalyse(b *testing.B) {
	al := inlineTestList(b)
	code := `import json,sys; d = json.load(sys.stdin); print(sorted(k.upper() for k in d.keys() if k.startswith("a")))`
	b.ReportAllocs()
	for b.Loop() {
		if v := al.Analyse("python3", code); !v.Confined {
			b.Fatal(v.Reason)
		}
	}
}

func TestParseInlineAllowList(t *testing.T) {
	for name, src := range map[string]string{
		"unknown key":      "languages:\n  python:\n    program: [python]\n",
		"unknown language": "languages:\n  cobol:\n    programs: [cobc]\n",
		"program twice":    "languages:\n  python:\n    programs: [x]\n  ruby:\n    programs: [x]\n",
		"empty name":       "languages:\n  python:\n    functions: ['']\n",
		"capable and lang": "capable_programs: [python]\nlanguages:\n  python:\n    programs: [python]\n",
		"not yaml":         "languages: [",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseInlineAllowList("x.yaml", []byte(src)); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// A "/" the tokenizer reads as division where the language could read a regex must not let
// code hide in what the tokenizer takes for a string.
func TestInlineSlashAmbiguity(t *testing.T) {
	al := inlineTestList(t)
	for _, c := range []struct{ prog, code string }{
		{"node", `if (1) /'/.test(''); eval(atob('eA==')); '/'`},
		{"node", `let x = 1; x++ /2; eval('1'); x/ 1`},
		{"node", `void /'/; eval('1'); '/'`},
		{"ruby", `p = 4; p /2; system("id"); q = 1/ 1`},
		{"perl", `print $x /'/; system("id"); '/'`},
	} {
		if v := al.Analyse(c.prog, c.code); v.Confined {
			t.Errorf("%s %s: confined", c.prog, c.code)
		}
	}
	for _, c := range []struct{ prog, code string }{
		{"node", `console.log((1 + 2) / 2)`},
		{"perl", `print $total / $count, "\n"`},
		{"perl", `print if /x/ && !/y/`},
		{"ruby", `puts 10 / 3`},
	} {
		if v := al.Analyse(c.prog, c.code); !v.Confined {
			t.Errorf("%s %s: capable (%s)", c.prog, c.code, v.Reason)
		}
	}
}
