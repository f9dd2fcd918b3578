package normalize

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestLinksOnDisk: with ResolveLinks, a workspace path reached through a symbolic link on disk is
// classified where the link leads; without it, as written.
func TestLinksOnDisk(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "project")
	home := filepath.Join(root, "home")
	for _, d := range []string{ws, filepath.Join(home, ".ssh"), filepath.Join(root, "srv")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustLink := func(target, link string) {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(filepath.Join(home, ".ssh"), filepath.Join(ws, "keys"))   // leaves to a secret directory
	mustLink(filepath.Join(root, "srv"), filepath.Join(ws, "data"))    // leaves to a plain directory
	mustLink(filepath.Join(ws, "src"), filepath.Join(ws, "current"))   // stays inside (target missing)
	mustLink("../home/.ssh/id_rsa", filepath.Join(ws, "relative-key")) // relative target
	mustLink(filepath.Join(ws, "keys"), filepath.Join(ws, "chain"))    // a link to a link
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := defaultCatalog(t)
	on := New(cat, specOpts(t, Options{Workspace: ws, Home: home, ResolveLinks: true}))
	off := New(cat, specOpts(t, Options{Workspace: ws, Home: home}))

	tests := []struct {
		name   string
		tool   string
		args   map[string]any
		want   string // effect (kind target detail prefix) with links resolved
		inWS   bool   // the first path's in_workspace with links resolved
		offWS  bool   // the same without
		secret bool   // a secret effect with links resolved
	}{
		{name: "read through a link to ~/.ssh", tool: "Read", args: map[string]any{"file_path": filepath.Join(ws, "keys", "id_rsa")},
			want: "secret " + filepath.Join(home, ".ssh", "id_rsa"), secret: true, offWS: true},
		{name: "relative link target", tool: "Read", args: map[string]any{"file_path": "relative-key"},
			want: "secret " + filepath.Join(home, ".ssh", "id_rsa"), secret: true, offWS: true},
		{name: "link to a link", tool: "Read", args: map[string]any{"file_path": "chain/id_rsa"},
			want: "secret " + filepath.Join(home, ".ssh", "id_rsa"), secret: true, offWS: true},
		{name: "write through a link leaving the workspace", tool: "Write", args: map[string]any{"file_path": "data/new.txt", "content": "x"},
			want: "write " + filepath.Join(root, "srv", "new.txt"), offWS: true},
		{name: "link inside the workspace, file not yet there", tool: "Write", args: map[string]any{"file_path": "current/a.go", "content": "x"},
			want: "write " + filepath.Join(ws, "src", "a.go"), inWS: true, offWS: true},
		{name: "shell read through a link", tool: "Bash", args: map[string]any{"command": "cat keys/id_rsa"},
			want: "secret " + filepath.Join(home, ".ssh", "id_rsa"), secret: true, offWS: true},
		{name: "plain file", tool: "Read", args: map[string]any{"file_path": "src/main.go"},
			want: "read " + filepath.Join(ws, "src", "main.go"), inWS: true, offWS: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := on.NormalizeContext(context.Background(), tc.tool, tc.args, ws)
			if !hasEffect(a.Effects, tc.want) {
				t.Errorf("effects %v, want %q", effectStrings(a.Effects), tc.want)
			}
			hasSecret := false
			for _, e := range a.Effects {
				hasSecret = hasSecret || e.Kind == EffectSecret
			}
			if hasSecret != tc.secret {
				t.Errorf("secret effect = %v, want %v (%v)", hasSecret, tc.secret, effectStrings(a.Effects))
			}
			if tc.tool != "Bash" && (len(a.Paths) == 0 || a.Paths[0].InWorkspace != tc.inWS) {
				t.Errorf("paths %+v: in_workspace want %v", a.Paths, tc.inWS)
			}
			b := off.NormalizeContext(context.Background(), tc.tool, tc.args, ws)
			if tc.tool != "Bash" && (len(b.Paths) == 0 || b.Paths[0].InWorkspace != tc.offWS) {
				t.Errorf("without ResolveLinks: paths %+v, in_workspace want %v", b.Paths, tc.offWS)
			}
		})
	}
}

// TestLinksWorkspaceItselfALink: a workspace reached through a link keeps its own files inside.
func TestLinksWorkspaceItselfALink(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "data", "project")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "a.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "project")
	if err := os.Symlink(real, ws); err != nil {
		t.Fatal(err)
	}
	n := New(defaultCatalog(t), specOpts(t, Options{Workspace: ws, Home: filepath.Join(root, "home"), ResolveLinks: true}))
	a := n.Normalize("Read", map[string]any{"file_path": "a.txt"}, ws)
	if len(a.Paths) != 1 || !a.Paths[0].InWorkspace || a.Paths[0].Clean != filepath.Join(ws, "a.txt") {
		t.Fatalf("paths %+v, want %s in the workspace", a.Paths, filepath.Join(ws, "a.txt"))
	}
}
