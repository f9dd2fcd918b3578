package normalize

import "testing"

// Destruction beyond files (effects_destroy.go, effects_lookalike.go, volumes.spec, publish.spec).
func TestDestroyEffects(t *testing.T) {
	t.Parallel()
	prod := fx{kind: "delete", target: "app_database:production"}
	dev := fx{kind: "delete", target: "app_database:development"}
	unnamed := fx{kind: "delete", target: "app_database"}
	hist := fx{kind: "delete", target: "vcs_history"}
	audit := fx{kind: "delete", target: "audit_trail"}
	vol := fx{kind: "delete", target: "block_volume"}
	format := fx{kind: "privilege", target: "root", detail: "format"}
	npmPush := fx{kind: "push", target: "npm_registry"}
	npmDel := fx{kind: "delete", target: "npm_registry"}
	maven := fx{kind: "push", target: "maven_repository"}
	runEffectCases(t, []effectCase{
		// Framework database tasks, by environment.
		{name: "rails drop production, guard off", cmd: "RAILS_ENV=production DISABLE_DATABASE_ENVIRONMENT_CHECK=1 bin/rails db:drop", want: []fx{prod}},
		{name: "guard off alone is production", cmd: "DISABLE_DATABASE_ENVIRONMENT_CHECK=1 bin/rails db:drop", want: []fx{prod}},
		{name: "rake argument env", cmd: "bundle exec rake db:schema:load RAILS_ENV=production", want: []fx{prod}},
		{name: "env through bundle exec", cmd: "RAILS_ENV=production bundle exec rake db:reset", want: []fx{prod}},
		{name: "env through env and nice", cmd: "env RAILS_ENV=staging nice bin/rails db:drop", want: []fx{prod}},
		{name: "exported env", cmd: "export RAILS_ENV=production; bin/rails db:purge", want: []fx{prod}},
		{name: "rails -e", cmd: "rails db:drop -e production", want: []fx{prod}},
		{name: "rails test env", cmd: "RAILS_ENV=test bin/rails db:reset", want: []fx{dev}, not: []fx{prod, unnamed}},
		{name: "rails unnamed env", cmd: "bin/rails db:reset", want: []fx{unnamed}, not: []fx{prod, dev}},
		{name: "rails migrate is no destruction", cmd: "RAILS_ENV=production bin/rails db:migrate", not: []fx{prod, dev, unnamed}},
		{name: "rails migrate to zero", cmd: "bin/rails db:migrate VERSION=0", want: []fx{unnamed}},
		{name: "django settings module", cmd: "DJANGO_SETTINGS_MODULE=config.settings.production python manage.py flush --noinput", want: []fx{prod}},
		{name: "django --settings", cmd: "python3 manage.py flush --settings=site.settings.prod", want: []fx{prod}},
		{name: "django migrate zero", cmd: "python manage.py migrate billing zero", want: []fx{unnamed}},
		{name: "django migrate", cmd: "python manage.py migrate", not: []fx{unnamed}},
		{name: "django -m", cmd: "python -m django flush --noinput", want: []fx{unnamed}},
		{name: "prisma remote url", cmd: "DATABASE_URL=postgresql://u:p@db.prod.example.com/app npx prisma migrate reset --force", want: []fx{prod}},
		{name: "prisma loopback url", cmd: "DATABASE_URL=postgresql://u:p@localhost/app npx prisma migrate reset --force", want: []fx{dev}, not: []fx{prod}},
		{name: "prisma file url", cmd: "DATABASE_URL=file:./dev.db npx prisma db push --force-reset", want: []fx{dev}},
		{name: "prisma compose service", cmd: "DATABASE_URL=postgresql://u:p@db:5432/app npx prisma migrate reset --force", want: []fx{unnamed}},
		{name: "prisma through pnpm", cmd: "pnpm prisma migrate reset --force", want: []fx{unnamed}},
		{name: "prisma through npm exec", cmd: "npm exec -- prisma db push --accept-data-loss", want: []fx{unnamed}},
		{name: "prisma migrate dev", cmd: "npx prisma migrate dev --name init", not: []fx{unnamed, dev, prod}},
		{name: "prisma db push without reset", cmd: "npx prisma db push", not: []fx{unnamed, dev, prod}},
		{name: "artisan --force", cmd: "php artisan migrate:fresh --seed --force", want: []fx{prod}},
		{name: "artisan env", cmd: "php artisan db:wipe --env=testing", want: []fx{dev}},
		{name: "mix prod", cmd: "MIX_ENV=prod mix ecto.drop", want: []fx{prod}},
		{name: "mix rollback all", cmd: "mix ecto.rollback --all", want: []fx{unnamed}},
		{name: "mix rollback one", cmd: "mix ecto.rollback", not: []fx{unnamed}},
		{name: "ef connection string", unknown: []string{"dotnet ef"}, cmd: `dotnet ef database drop -f --connection "Host=pg.prod.example.net;Database=app"`, want: []fx{prod}},
		{name: "ef update 0", unknown: []string{"dotnet ef"}, cmd: "dotnet ef database update 0", want: []fx{unnamed}},
		{name: "ef update", unknown: []string{"dotnet ef"}, cmd: "dotnet ef database update", not: []fx{unnamed}},
		{name: "knex rollback all", unknown: []string{"knex"}, cmd: "knex migrate:rollback --all --env production", want: []fx{prod}},
		{name: "knex rollback one", unknown: []string{"knex"}, cmd: "knex migrate:rollback", not: []fx{unnamed, prod}},
		{name: "alembic downgrade base", cmd: "alembic -c alembic.ini downgrade base", want: []fx{unnamed}},
		{name: "alembic downgrade one", cmd: "alembic downgrade -1", not: []fx{unnamed}},
		{name: "flyway remote url", cmd: "flyway -url=jdbc:postgresql://db.prod.example.com/app clean", want: []fx{prod}},
		{name: "task from an expansion is not read", cmd: "bin/rails $TASK", not: []fx{unnamed, prod, dev}},
		// Local history.
		{name: "reflog expire now", cmd: "git reflog expire --expire=now --all", want: []fx{hist}},
		{name: "reflog expire separate value", cmd: "git reflog expire --expire-unreachable now --all", want: []fx{hist}},
		{name: "reflog expire default", cmd: "git reflog expire --expire=90.days.ago --all", not: []fx{hist}},
		{name: "gc prune now", cmd: "git -C . gc --prune=now --aggressive", want: []fx{hist}},
		{name: "gc", cmd: "git gc --aggressive", not: []fx{hist}},
		{name: "prune", cmd: "git prune", want: []fx{hist}},
		{name: "prune dry run", cmd: "git prune -n", not: []fx{hist}},
		{name: "filter-repo", cmd: "git filter-repo --path secrets --invert-paths", want: []fx{hist}},
		{name: "filter-repo analyze", cmd: "git filter-repo --analyze", not: []fx{hist}},
		{name: "update-ref -d", cmd: "git update-ref -d refs/heads/main", want: []fx{hist}},
		{name: "stash clear", cmd: "git stash clear", want: []fx{hist}},
		{name: "stash drop", cmd: "git stash drop", not: []fx{hist}},
		{name: "many branches", cmd: "git branch -D a b c", want: []fx{hist}},
		{name: "branches from xargs", cmd: "git branch | xargs git branch -D", want: []fx{hist}},
		{name: "one branch", cmd: "git branch -D topic", not: []fx{hist}},
		{name: "merged branches", cmd: "git branch -d a b c", not: []fx{hist}},
		{name: "rm .git", cmd: "rm -rf .git", want: []fx{hist}},
		{name: "rm .git objects", cmd: "rm -rf /home/user/project/.git/objects", want: []fx{hist}},
		{name: "rm a dependency's .git", cmd: "rm -rf vendor/lib/.git", not: []fx{hist}},
		// Audit off.
		{name: "cloudtrail stop-logging", cmd: "aws cloudtrail stop-logging --name org-trail", want: []fx{audit}},
		{name: "cloudtrail with globals first", cmd: "aws --profile prod --region us-east-1 cloudtrail delete-trail --name t", want: []fx{audit}},
		{name: "cloudtrail describe", cmd: "aws cloudtrail describe-trails", not: []fx{audit}},
		{name: "guardduty disable", cmd: "aws guardduty update-detector --detector-id d --no-enable", want: []fx{audit}},
		{name: "guardduty frequency", cmd: "aws guardduty update-detector --detector-id d --finding-publishing-frequency SIX_HOURS", not: []fx{audit}},
		{name: "gcloud sink", cmd: "gcloud logging sinks delete audit --project p", want: []fx{audit}},
		{name: "gcloud services disable logging", cmd: "gcloud services disable logging.googleapis.com", want: []fx{audit}},
		{name: "gcloud services disable other", cmd: "gcloud services disable translate.googleapis.com", not: []fx{audit}},
		{name: "az diagnostic settings", cmd: "az monitor diagnostic-settings delete -n x --resource r", want: []fx{audit}},
		{name: "set +o history", cmd: "set +o history", want: []fx{audit}},
		{name: "set -o pipefail", cmd: "set -euo pipefail", not: []fx{audit}},
		{name: "wevtutil clear", unknown: []string{"wevtutil"}, cmd: "wevtutil cl Security", want: []fx{audit}},
		{name: "wevtutil query", unknown: []string{"wevtutil"}, cmd: "wevtutil qe Security /c:5", not: []fx{audit}},
		{name: "auditpol clear", unknown: []string{"auditpol"}, cmd: "auditpol /clear /y", want: []fx{audit}},
		{name: "aa-teardown", unknown: []string{"aa-teardown"}, cmd: "aa-teardown", want: []fx{{kind: "delete", target: "security_control"}}},
		{name: "apparmor reload", cmd: "apparmor_parser -r /etc/apparmor.d/x", not: []fx{{kind: "delete", target: "security_control"}}, unknown: []string{"apparmor_parser"}},
		{name: "flask downgrade base", cmd: "flask db downgrade base", want: []fx{unnamed}},
		{name: "flask upgrade", cmd: "flask db upgrade", not: []fx{unnamed}},
		// Volumes.
		{name: "lvremove", cmd: "lvremove -fy vg0/postgres", want: []fx{vol}},
		{name: "zfs destroy", cmd: "zfs destroy -r tank/home", want: []fx{vol}},
		{name: "zfs recv -F", cmd: "zfs recv -F tank/home", want: []fx{vol}},
		{name: "zfs recv", cmd: "zfs recv tank/new", not: []fx{vol}},
		{name: "btrfs abbreviated", cmd: "btrfs sub del /mnt/@snap", want: []fx{vol}},
		{name: "btrfs list", cmd: "btrfs subvolume list /mnt", not: []fx{vol}},
		{name: "mdadm zero superblock", cmd: "mdadm --zero-superblock /dev/sdb1", want: []fx{vol}},
		{name: "mdadm detail", cmd: "mdadm --detail /dev/md0", not: []fx{vol, format}},
		{name: "mdadm create", cmd: "mdadm --create /dev/md1 --level=1 --raid-devices=2 /dev/sdb /dev/sdc", want: []fx{format}},
		{name: "nvme format", cmd: "nvme format /dev/nvme0n1", want: []fx{format}},
		// Registries.
		{name: "npm unpublish", cmd: "npm unpublish @globex/ui-kit --force", want: []fx{npmDel}},
		{name: "npm unpublish dry run", cmd: "npm unpublish --dry-run @globex/ui-kit@1.0.0", not: []fx{npmDel}},
		{name: "npm dist-tag add", cmd: "npm dist-tag add @globex/ui-kit@0.0.0-dbg latest", want: []fx{npmPush}},
		{name: "npm dist-tag ls", cmd: "npm dist-tag ls @globex/ui-kit", not: []fx{npmPush}},
		{name: "cargo yank is a push", cmd: "cargo yank --vers 1.0.0 x", want: []fx{{kind: "push", target: "crates.io"}}},
		{name: "gem yank", cmd: "gem yank x -v 1.0.0", want: []fx{{kind: "delete", target: "rubygems"}}},
		{name: "mvn deploy", cmd: "mvn -B -DskipTests deploy", want: []fx{maven}},
		{name: "mvn install", cmd: "mvn -B install", not: []fx{maven}},
		{name: "gradle publish task path", cmd: "./gradlew :lib:publishAllPublicationsToMavenRepository", want: []fx{maven}},
		{name: "gradle publishToMavenLocal", cmd: "./gradlew publishToMavenLocal", not: []fx{maven}},
		{name: "mix hex revert", cmd: "mix hex.publish --revert 1.0.0", want: []fx{{kind: "delete", target: "hex"}}},
		// Typosquats.
		{name: "pip typo", cmd: "pip install reqeusts", want: []fx{{kind: "install", target: "reqeusts", detail: "lookalike:requests"}}},
		{name: "npm transposition", cmd: "npm install loadsh", want: []fx{{kind: "install", target: "loadsh", detail: "lookalike:lodash"}}},
		{name: "npm scope typo", cmd: "npm i -D @typse/node@20", want: []fx{{kind: "install", target: "@typse/node@20", detail: "lookalike:@types/node"}}},
		{name: "npm separator dropped", cmd: "npm i crossenv", want: []fx{{kind: "install", target: "crossenv", detail: "lookalike:cross-env"}}},
		{name: "homoglyph", cmd: "npm i 1odash", want: []fx{{kind: "install", target: "1odash", detail: "lookalike:lodash"}}},
		{name: "pinned pypi typo", cmd: "pip install 'djnago>=4'", want: []fx{{kind: "install", target: "djnago>=4", detail: "lookalike:django"}}},
		{name: "crate typo", cmd: "cargo add serde_jsno", want: []fx{{kind: "install", target: "serde_jsno", detail: "lookalike:serde_json"}}},
	})
}

// Popular names, the registry's own folding and names far from any popular one stay plain.
func TestLookalikeOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ reg, name, want string }{
		{"pypi", "requests", ""},
		{"pypi", "Requests", ""},
		{"pypi", "python_dateutil", ""},
		{"pypi", "reqeusts", "requests"},
		{"pypi", "requestss", "requests"},
		{"pypi", "uvicorn[standard]", ""},
		{"pypi", "torchmetrics", ""},
		{"pypi", "scapy", ""},
		{"pypi", "cattrs", ""}, // legitimate neighbours of popular names are listed themselves
		{"pypi", "markdown2", ""},
		{"pypi", "psycopg-binary", ""},
		{"rubygems", "ffaker", ""},
		{"npm", "react", ""},
		{"npm", "preact", ""},
		{"npm", "react@18.2.0", ""},
		{"npm", "@types/node", ""},
		{"npm", "types-node", "@types/node"},
		{"npm", "@globex/ui-kit", ""},
		{"npm", "rnoment", "moment"},
		{"npm", "lodahs", "lodash"},
		{"npm", "pg", ""},
		{"npm", "ws", ""},
		{"crates", "serde-json", ""}, // crates.io folds '-' and '_'
		{"crates", "tokioo", "tokio"},
		{"rubygems", "rials", "rails"},
		{"rubygems", "rails", ""},
		{"nuget", "Newtonsoft.Json", ""}, // no list for the registry: nothing judged
		{"npm", "", ""},
	} {
		if got := lookalikeOf(tc.reg, tc.name); got != tc.want {
			t.Errorf("lookalikeOf(%q, %q) = %q, want %q", tc.reg, tc.name, got, tc.want)
		}
	}
}

func TestWithinOneEdit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"lodash", "lodash", false}, {"lodash", "loadsh", true}, {"lodash", "lodas", true}, {"lodash", "lodashh", true},
		{"lodash", "lodazh", true}, {"lodash", "ldoahs", false}, {"lodash", "lo", false}, {"", "a", true}, {"ab", "ba", true},
		{"abc", "cab", false},
	} {
		if got := withinOneEdit(tc.a, tc.b); got != tc.want {
			t.Errorf("withinOneEdit(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := withinOneEdit(tc.b, tc.a); got != tc.want {
			t.Errorf("withinOneEdit(%q, %q) = %v, want %v (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestDBURLClass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ v, want string }{
		{"postgresql://u:p@localhost:5432/app", "local"},
		{"postgres://u:p@127.0.0.1/app", "local"},
		{"file:./dev.db", "local"},
		{"sqlite:///tmp/x.db", "local"},
		{"postgresql://u:p@db.prod.example.com/app", "remote"},
		{"mysql://u:p@10.0.3.4/app", "remote"},
		{"postgresql://u:p@db:5432/app", ""},
		{"Host=pg.prod.example.net;Database=app", "remote"},
		{"Server=localhost,1433;Database=app", "local"},
		{"jdbc:postgresql://db.prod.example.com/app", "remote"},
		{"not a url", ""},
		{"", ""},
	} {
		if got := dbURLClass(tc.v); got != tc.want {
			t.Errorf("dbURLClass(%q) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// FuzzLookalike: any name on any registry: no panic, a popular name is never its own lookalike,
// and an answer is always a listed name.
func FuzzLookalike(f *testing.F) {
	for _, s := range []string{"reqeusts", "loadsh", "@types/node", "@typse/node@20", "types-node", "1odash", "uvicorn[standard]",
		"a", "", "@", "@/", "@a@b", "djnago>=4", "x;y", "rn", "\xff\xfe", "serde_jsno"} {
		f.Add("npm", s)
		f.Add("pypi", s)
		f.Add("crates", s)
	}
	f.Fuzz(func(t *testing.T, reg, name string) {
		p := lookalikeOf(reg, name)
		if p == "" {
			return
		}
		listed := false // of this registry, or of another one (lookalike_cross.go)
		for _, names := range popular {
			listed = listed || names[p]
		}
		if !listed {
			t.Fatalf("lookalikeOf(%q, %q) = %q, not a listed name", reg, name, p)
		}
		if popular[reg][normPackageName(reg, packageBaseName(reg, name))] {
			t.Fatalf("lookalikeOf(%q, %q) = %q, but the name itself is listed", reg, name, p)
		}
	})
}
