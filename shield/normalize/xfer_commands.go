package normalize

import (
	"path"
	"strings"
)

// File-transfer command languages (issue 11, wave 8): sftp -b FILE|-, lftp -c/-e, smbclient -c
// take a script of transfer commands. Like a list of names (name_lists.go), what the script names
// is what the client reads, writes and runs on this host:
//
//	put/mput/reput/append LOCAL [REMOTE]   LOCAL is read and sent over the client's connection
//	mirror -R|--reverse LOCALDIR           the same for a directory (what lies under it)
//	get/mget/reget/pget REMOTE [LOCAL]     LOCAL (or REMOTE's base name here) is written
//	lcd DIR                                later local names are relative to DIR (unresolved)
//	!CMD, shell CMD, local CMD             CMD runs here, as shell
//	open/connect URL|HOST                  a connection
//
// Commands that act on the remote side only (ls, cd, mkdir, rm, chmod, rename, bye …) have no
// local effect; any other word is a command this reading does not know: unresolved. A script
// given as a file, or on a standard input that is not literal, is not read: unresolved.

// xferRemoteOnly: transfer commands with no effect on this host.
var xferRemoteOnly = set("ls", "dir", "cd", "cdup", "pwd", "mkdir", "rmdir", "rm", "mrm", "del", "delete", "mdelete",
	"chmod", "chown", "chgrp", "rename", "mv", "ln", "symlink", "bye", "quit", "exit", "close", "set", "lpwd", "lls",
	"binary", "bin", "ascii", "prompt", "hash", "progress", "version", "help", "?", "df", "stat", "cat", "more", "less",
	"du", "find", "glob", "user", "login", "debug", "verbose", "passive", "recurse", "lowercase", "tarmode", "mask",
	"allinfo", "echo", "exit", "wait", "jobs", "lmkdir", "lumask", "umask")

// xferCommands reads the transfer scripts of a command (options whose role is "xfer").
func (w *walker) xferCommands(f frame, pa parsedArgs, name string, stdin string) {
	for _, v := range pa.vals {
		if v.role != "xfer" {
			continue
		}
		script := v.val
		switch {
		case v.dyn && isUnresolvedText(v.val):
			w.xferUnread(name, "script "+v.val)
			continue
		case v.opt == "-b" || v.opt == "-f":
			if v.val != "-" && v.val != "/dev/stdin" {
				w.pathEffect(EffectRead, name, v.val, false)
				w.xferUnread(name, "script file "+v.val)
				continue
			}
			if stdin == "" {
				w.xferUnread(name, "standard input")
				continue
			}
			script = stdin
		}
		w.xferScript(f, name, script)
	}
}

func (w *walker) xferUnread(name, from string) {
	w.s.addUnresolved("transfer commands from " + from + " (" + name + ")")
	w.s.addEffect(Effect{Kind: EffectExec, Target: name, Program: name, Detail: "transfer commands from " + from, Unresolved: true})
}

// xferScript walks one script of transfer commands.
func (w *walker) xferScript(f frame, name, script string) {
	s := w.s
	if len(script) > maxExpandedWord {
		w.xferUnread(name, "a script over the size bound")
		return
	}
	n := 0
	for _, line := range strings.FieldsFunc(script, func(r rune) bool { return r == '\n' || r == ';' }) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if n++; n > 64 {
			w.xferUnread(name, "a script of over 64 commands")
			return
		}
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			w.shellValue(f, name, name+" !", strings.TrimSpace(rest), false)
			continue
		}
		words := strings.Fields(line)
		verb := strings.ToLower(strings.TrimLeft(words[0], "-"))
		args := words[1:]
		ops := []string{}
		reverse := false
		for _, a := range args {
			if a == "-R" || a == "--reverse" {
				reverse = true
			}
			if !strings.HasPrefix(a, "-") {
				ops = append(ops, strings.Trim(a, `"'`))
			}
		}
		switch verb {
		case "put", "mput", "reput", "append", "sput":
			if len(ops) == 0 {
				continue
			}
			locals := ops
			if verb != "mput" && len(ops) > 1 {
				locals = ops[:1]
			}
			for _, l := range locals {
				w.sendFile(name, "send", l, strings.ContainsAny(l, "*?["))
				s.addPath(l, RoleRead)
			}
		case "mirror":
			if reverse && len(ops) > 0 {
				w.sendFile(name, "send", ops[0], false)
				s.addPath(ops[0], RoleRead)
			}
		case "get", "mget", "reget", "pget", "sget":
			if len(ops) == 0 {
				continue
			}
			local := path.Base(ops[0])
			if verb != "mget" && len(ops) > 1 {
				local = ops[1]
			}
			w.pathEffect(EffectWrite, name, local, strings.ContainsAny(local, "*?["))
		case "lcd":
			s.addUnresolved("local directory changed by " + name + " lcd")
		case "shell", "local", "system":
			w.shellValue(f, name, name+" "+verb, strings.Join(args, " "), false)
		case "open", "connect":
			for _, o := range ops {
				if strings.Contains(o, "://") {
					w.urlEffect(name, o, false)
				} else {
					w.hostEffect(name, o, "", name, false)
				}
			}
		default:
			if !xferRemoteOnly[verb] {
				w.xferUnread(name, "command "+verb)
			}
		}
	}
}
