//go:build tools

// Package versions keeps etcd's server in this module's requirements;
// the tests build its main package, go.etcd.io/etcd/server/v3.
package versions

import _ "go.etcd.io/etcd/server/v3/etcdmain"
