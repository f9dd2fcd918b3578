// Package deploy holds the appliance's packaging as reviewable data: the hardened systemd unit,
// sysusers.d and tmpfiles.d entries (systemd/), the example configuration (shield.yaml) and the
// .deb recipe (deb/). It has no Go API; its tests check the unit's exposure rating. Nothing
// imports it.
package deploy
