package data

import _ "embed"

// ReleaseImage is the pinned default OpenShift release this build installs:
// one line "<version> <architecture> <pull spec>".
//
//go:embed release/default-release.txt
var ReleaseImage string
