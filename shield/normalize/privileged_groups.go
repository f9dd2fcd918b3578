package normalize

// Groups whose membership is root on the host: the Docker and Podman sockets' groups (a
// container with / mounted), disk (raw block devices), lxd and libvirt (privileged guests),
// shadow (password hashes), sudo/wheel/admin (sudo rights), root itself. `newgrp docker` and
// `sg docker -c CMD` switch the session or the command into one; privilegedGroups adds a
// privilege effect, Target "group:NAME". Other groups (newgrp dev, sg audio) are left alone.

var rootEquivalentGroups = set("docker", "podman", "root", "wheel", "sudo", "admin", "disk", "lxd", "libvirt", "libvirtd", "shadow",
	"kvm", "adm", "systemd-journal", "microk8s", "incus-admin", "incus")

func (w *walker) privilegedGroups(name string, ops words) {
	if name != "newgrp" && name != "sg" || len(ops.argv) == 0 {
		return
	}
	g := ops.argv[0]
	if g == "-" && len(ops.argv) > 1 { // newgrp - GROUP: a login environment
		g = ops.argv[1]
	}
	if rootEquivalentGroups[g] {
		w.s.addEffect(Effect{Kind: EffectPrivilege, Target: "group:" + g, Program: name, Detail: name})
	}
}
