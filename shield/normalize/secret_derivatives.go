package normalize

import (
	"regexp"
	"strings"
)

// Derivatives of a secret are secrets. An editor's swap, undo or backup file, a package
// manager's saved copy, a numbered, dated, compressed or "(copy)" duplicate holds the content of
// the file it derives from: `.env.swp`, `.env~`, `#.env#`, `id_rsa.bak`, `secrets.json.orig`,
// `server.key.1`, `credentials.json.2024-05-01`, `.pgpass.dpkg-old`, `kubeconfig (copy)`,
// `key.properties.gz`. derivativeKind strips such decorations from the file name (a few rounds:
// `.env.bak.1.gz`) and classifies what is left; the derivative takes the base's kind when that
// kind is a secret (derivativeKinds). Derivatives of files that are not secrets stay what they
// are (`README.md~`, `config.bak`, `.bashrc.bak`: a copy of a start-up file is not sourced, so it
// is neither a secret nor persistence).
//
// FPR cost: only files whose base name is already a credential change class; a workspace's
// `.env.swp` is judged like its `.env` (secret effect: outside the exec envelope, ESCALATE).

// derivativeKinds: kinds whose copies are secrets (the secret kinds of catalog.yaml's
// path_effects, less the /proc views which have no copies).
var derivativeKinds = set("ssh_key", "cloud_credentials", "kube_config", "k8s_service_account", "docker_config", "credentials",
	"dotenv", "gpg_keyring", "private_key", "shadow", "shell_history", "browser_credentials", "password_store")

// derivativeSuffixRE: decorations at the end of a file name, one per round. Editors: vim swap
// (.swp … .swa, .swap) and undo (.un~), emacs backups (~, .~1~), kate (.kate-swp), nano (.save,
// .save.1), JetBrains safe-write (___jb_tmp___, ___jb_old___); backups and saved copies (.bak,
// .orig, .old, .save, .backup, .tmp, .copy, .prev, .sav, .bk, .bkp, _backup, -old …); package
// managers' saved configuration (.dpkg-old/-dist/-new/-bak, .ucf-*, .rpmsave/.rpmnew/.rpmorig,
// .pacsave/.pacnew); numbered and dated copies (.1, -2, .20240501, .2024-05-01T12:00:00);
// compressed and archived copies (.gz, .bz2, .xz, .zst, .lz4, .zip, .7z, .tar, .tgz).
var derivativeSuffixRE = regexp.MustCompile(`(?i)(~|\.~[0-9]{1,4}~|\.un~|\.sw[a-p]|\.swap|\.kate-swp|___jb_(tmp|old|bak)___|` +
	`[._-](bak|bak[0-9]{1,3}|orig|old|save|saved|backup|bkp|bk|tmp|temp|copy|prev|previous|sav|last|keep)|` +
	`\.(dpkg|ucf)-(old|dist|new|bak|tmp)|\.rpm(save|new|orig)|\.pac(save|new)|` +
	`[._-][0-9]{1,3}|[._-][0-9]{8}([T_-]?[0-9]{4,6}Z?)?|[._-][0-9]{4}-[0-9]{2}-[0-9]{2}([T_ ][0-9]{2}[:-]?[0-9]{2}([:-]?[0-9]{2})?Z?)?|` +
	`\.(gz|bz2|xz|zst|lz4|lzma|z|zip|7z|tar|tgz|tbz2?|txz))$`)

// derivativeCopyRE: file managers' duplicates, before the extension: "name (copy).ext",
// "name (another copy)", "name (2)", "name (copy 3)", "name - Copy", "name copy 2".
var derivativeCopyRE = regexp.MustCompile(`(?i)^(.+?)( \((copy|another copy|[0-9]+(st|nd|rd|th) copy|copy [0-9]+|[0-9]{1,3})\)| - copy( \([0-9]{1,3}\))?| copy( [0-9]{1,3})?)(\.[^. ]{1,12})?$`)

// derivativeBase strips one round of decorations from a file name: the base it derives from, or
// "" when the name is not a derivative. Swap and emacs auto-save names also drop the dot or
// '#' they add around the base (.NAME.swp, #NAME#, .#NAME).
func derivativeBase(name string) string {
	if len(name) < 2 || len(name) > 255 {
		return ""
	}
	if len(name) > 2 && name[0] == '#' && name[len(name)-1] == '#' {
		return name[1 : len(name)-1] // emacs auto-save
	}
	if strings.HasPrefix(name, ".#") && len(name) > 2 {
		return name[2:] // emacs lock
	}
	if m := derivativeCopyRE.FindStringSubmatch(name); m != nil {
		return m[1] + m[len(m)-1]
	}
	if strings.HasPrefix(strings.ToLower(name), "copy of ") && len(name) > 8 {
		return name[8:]
	}
	loc := derivativeSuffixRE.FindStringIndex(name)
	if loc == nil || loc[0] == 0 {
		return ""
	}
	return name[:loc[0]]
}

// derivativeKind: the secret kind of the file a path derives from (see above), or "".
func (m *sensitiveMatcher) derivativeKind(clean string) string {
	i := strings.LastIndexByte(clean, '/')
	if i < 0 || len(clean) > 4096 {
		return ""
	}
	dir, name := clean[:i+1], clean[i+1:]
	for round := 0; round < 4; round++ {
		base := derivativeBase(name)
		if base == "" || base == name {
			break
		}
		cands := []string{base}
		// vim names the swap file of NAME .NAME.swp (of .NAME, .NAME.swp too).
		if strings.HasPrefix(base, ".") && len(base) > 1 && isSwapSuffix(name[len(base):]) {
			cands = append(cands, base[1:])
		}
		for _, b := range cands {
			if k := m.classifyDirect(dir + b); k != "" {
				if derivativeKinds[k] {
					return k
				}
				return ""
			}
		}
		name = base
	}
	return m.derivativeDirKind(clean)
}

// derivativeDirKind: a copy of a hidden credential directory (~/.aws.bak/credentials,
// ~/.ssh.old/id_rsa, ~/.gnupg~/…, ~/.kube.orig/config) holds what the directory holds: the
// path is classified with a decorated hidden element put back to its base.
func (m *sensitiveMatcher) derivativeDirKind(clean string) string {
	elems := strings.Split(clean, "/")
	if len(elems) > 48 {
		return ""
	}
	for i, e := range elems[:len(elems)-1] {
		if len(e) < 3 || e[0] != '.' {
			continue
		}
		base := derivativeBase(e)
		if len(base) < 2 || base == e {
			continue
		}
		p := strings.Join(elems[:i], "/") + "/" + base + "/" + strings.Join(elems[i+1:], "/")
		if k := m.classifyDirect(p); k != "" {
			if derivativeKinds[k] {
				return k
			}
			return ""
		}
	}
	return ""
}

func isSwapSuffix(s string) bool {
	s = strings.ToLower(s)
	return len(s) == 4 && strings.HasPrefix(s, ".sw") || s == ".swap" || s == ".un~" || s == ".kate-swp"
}
