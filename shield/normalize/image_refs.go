package normalize

import "strings"

// Images named by cluster and orchestrator commands run like docker run's (rego/images.rego
// judges every container_image install effect by its canonical reference):
//
//   - kubectl run NAME --image=IMG, kubectl create deployment|job|cronjob NAME --image=IMG,
//     kubectl set image RESOURCE CONTAINER=IMG;
//   - docker service create [options] IMG, docker stack/compose are read from their files;
//   - helm install|upgrade --set image=IMG / --set *.image.repository=IMG (with its .tag).

// dockerServiceFlags: docker service create options that take no value.
var dockerServiceFlags = set("-d", "--detach", "-q", "--quiet", "--no-healthcheck", "--no-resolve-image", "--read-only", "--init",
	"-t", "--tty", "--with-registry-auth")

// orchestratorImages records the images a cluster or swarm command runs.
func (w *walker) orchestratorImages(name string, args words) {
	argv := args.argv
	if len(argv) > 256 {
		argv = argv[:256]
	}
	ops := nonOptions(argv)
	switch name {
	case "kubectl", "oc", "k3s", "microk8s":
		if len(ops) == 0 {
			return
		}
		switch {
		case ops[0] == "run", ops[0] == "create" && len(ops) > 1:
			for i, a := range argv {
				if a == "--image" && i+1 < len(argv) {
					w.containerImage(name, argv[i+1], args.dyn[i+1])
				} else if v, ok := strings.CutPrefix(a, "--image="); ok {
					w.containerImage(name, v, args.dyn[i])
				}
			}
		case ops[0] == "set" && len(ops) > 2 && ops[1] == "image":
			for i, a := range argv {
				if _, img, ok := strings.Cut(a, "="); ok && !strings.HasPrefix(a, "-") {
					w.containerImage(name, img, args.dyn[i])
				}
			}
		}
	case "docker", "podman":
		if len(ops) < 2 || ops[0] != "service" || ops[1] != "create" {
			return
		}
		seen := 0
		for i := 0; i < len(argv); i++ {
			a := argv[i]
			switch {
			case strings.HasPrefix(a, "-"):
				if !strings.Contains(a, "=") && !dockerServiceFlags[a] {
					i++ // the option's value
				}
			case seen < 2:
				seen++ // "service", "create"
			default:
				w.containerImage(name, a, args.dyn[i])
				return
			}
		}
	case "helm":
		if len(ops) == 0 || ops[0] != "install" && ops[0] != "upgrade" && ops[0] != "template" {
			return
		}
		repo, tag := "", ""
		dyn := false
		for i := 0; i < len(argv); i++ {
			if argv[i] != "--set" && argv[i] != "--set-string" || i+1 >= len(argv) {
				continue
			}
			i++
			for _, kv := range strings.Split(argv[i], ",") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					continue
				}
				switch {
				case k == "image" || strings.HasSuffix(k, ".image"):
					w.containerImage(name, v, args.dyn[i])
				case k == "image.repository" || strings.HasSuffix(k, ".image.repository"):
					repo, dyn = v, args.dyn[i]
				case k == "image.tag" || strings.HasSuffix(k, ".image.tag"):
					tag = v
				}
			}
		}
		if repo != "" {
			if tag != "" {
				repo += ":" + tag
			}
			w.containerImage(name, repo, dyn)
		}
	}
}
