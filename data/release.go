package data

import _ "embed"

// ReleaseImage is the pinned default OpenShift release this build installs:
// one line "<version> <architecture> <pull spec>", the pull spec by digest
// (digest-only mirrors never serve a tag; docs/release.md says where the
// digest comes from).
//
//go:embed release/default-release.txt
var ReleaseImage string
