package server

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
)

// The web console: static assets embedded in the binary (no CDN, no build step), served under a
// strict Content-Security-Policy: scripts, styles and connections from the appliance's own
// origin only, no inline script or style, no framing, no forms posting anywhere. The console
// speaks only to the JSON API with the identity the browser presents: a bearer token it keeps in
// sessionStorage and sends in the Authorization header (never a cookie), or the client
// certificate of a mutual-TLS listener. Unsafe requests need Content-Type: application/json and
// pass cross-origin protection (NewHTTP), so another site cannot drive a certificate-holding
// browser. Everything the console shows from calls is inserted as text (textContent), never as
// markup.

//go:embed console
var consoleFS embed.FS

// ConsoleCSP is the Content-Security-Policy of every console page.
const ConsoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
	"form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

func (h *HTTP) mountConsole() {
	sub, _ := fs.Sub(consoleFS, "console")
	files := http.FileServerFS(sub)
	serve := func(w http.ResponseWriter, r *http.Request, name string) {
		w.Header().Set("Content-Security-Policy", ConsoleCSP)
		w.Header().Set("Cache-Control", "no-cache")
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/" + name
		files.ServeHTTP(w, r2)
	}
	h.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { serve(w, r, "") })
	h.mux.HandleFunc("GET /console/{file}", func(w http.ResponseWriter, r *http.Request) {
		name := path.Base(r.PathValue("file"))
		if _, err := fs.Stat(sub, name); err != nil || name == "index.html" {
			http.NotFound(w, r)
			return
		}
		serve(w, r, name)
	})
}
