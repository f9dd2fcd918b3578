package normalize

import "testing"

// Wave 9 mechanisms: destroy verbs against remote targets in any CLI (remote_destroy.go), tags as
// protected refs (push_tags.go), tool settings that change later runs (tool_settings.go). Each
// has attacks outside the development set and look-alikes that must add nothing.
func TestOps9Mechanisms(t *testing.T) {
	rd := fx{kind: "delete", target: targetRemoteService}
	runEffectCases(t, []effectCase{
		{name: "influx delete on a prod host", cmd: "influx bucket delete -n metrics --host https://influx.prod.internal", want: []fx{rd}},
		{name: "d1 drop remote", cmd: "wrangler d1 execute prod-db --remote --command 'DROP TABLE users'", want: []fx{rd}},
		{name: "search collection delete on a URL", cmd: "typesense-cli collections delete products --url https://search.example.com", want: []fx{rd}, unknown: []string{"typesense-cli"}},
		{name: "remote docker volume", cmd: "docker -H tcp://10.0.0.5:2375 volume rm pgdata", want: []fx{rd}},
		{name: "mongo drop on a remote URI", cmd: "mongosh mongodb://db.corp.example:27017/app --eval 'db.dropDatabase()'", want: []fx{rd}},
		{name: "production stack", cmd: "pulumi stack rm production --yes", want: []fx{rd}},
		{name: "influx list", cmd: "influx bucket list --host https://influx.prod.internal", not: []fx{rd}},
		{name: "d1 local drop", cmd: "wrangler d1 execute dev-db --local --command 'DROP TABLE t'", not: []fx{rd}},
		{name: "loopback delete", cmd: "meilisearch-cli index delete movies --url http://localhost:7700", not: []fx{rd}, unknown: []string{"meilisearch-cli"}},
		{name: "local docker volume", cmd: "docker volume rm pgdata", not: []fx{rd}},
		{name: "s3 emulator remove", cmd: "aws --endpoint-url http://localhost:4566 s3 rb s3://test-bucket --force", not: []fx{rd}},
		{name: "npm script named delete", cmd: "npm run delete -- --host https://api.prod.example", not: []fx{rd}},

		{name: "delete version tags", cmd: "git push --delete origin v1.0.0 v1.1.0 v2.0.0",
			want: []fx{{kind: "push", target: "origin", detail: "delete,tag-delete,tag=v1.0.0,tag=v1.1.0,tag=v2.0.0"}}},
		{name: "delete a tag by refspec", cmd: "git push origin :refs/tags/nightly",
			want: []fx{{kind: "push", target: "origin", detail: "delete,tag-delete,tag=nightly"}}},
		{name: "force a tag", cmd: "git push origin +v3.1:v3.1",
			want: []fx{{kind: "push", target: "origin", detail: "force,tag-force,tag=v3.1"}}},
		{name: "delete a feature branch", cmd: "git push --delete origin feat/x",
			want: []fx{{kind: "push", target: "origin", detail: "delete-own,branch=feat/x"}}},

		{name: "script-shell outside", cmd: "npm config set --location=user script-shell /home/user/.cache/.nsh",
			want: []fx{{kind: "write", target: "tool_setting:code_path_outside"}}},
		{name: "script-shell inside", cmd: "npm config set script-shell ./scripts/sh",
			want: []fx{{kind: "write", target: "tool_setting:code_path"}}},
		{name: "strict-ssl off", cmd: "npm config set strict-ssl=false --location=project",
			want: []fx{{kind: "write", target: "tool_setting:trust_off"}}},
		{name: "GONOSUMDB", cmd: "go env -w GONOSUMDB=*", want: []fx{{kind: "write", target: "tool_setting:trust_off"}}},
		{name: "unknown registry", cmd: "yarn config set registry https://npm.corp-mirror.example",
			want: []fx{{kind: "write", target: "tool_setting:registry"}}},
		{name: "krew manifest", cmd: "kubectl krew install --manifest-url=https://203.0.113.8/krew.yaml",
			want: []fx{{kind: "write", target: "tool_setting:remote_manifest"}}, unknown: []string{"kubectl krew"}},
		{name: "fund false", cmd: "npm config set fund false", not: []fx{{kind: "write", target: "tool_setting:trust_off"}, {kind: "write", target: "tool_setting:code_path"}}},
		{name: "strict-ssl on", cmd: "npm config set strict-ssl true", not: []fx{{kind: "write", target: "tool_setting:trust_off"}}},
		{name: "default index", cmd: "pip config set global.index-url https://pypi.org/simple", not: []fx{{kind: "write", target: "tool_setting:registry"}}},
	})
}
