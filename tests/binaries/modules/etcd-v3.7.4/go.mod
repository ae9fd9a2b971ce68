// etcd v3.7.4 from upstream Go modules (tests/binaries/pin.py wrote this; build.py builds it).
// components: etcd
module kubesched.test/binaries/etcd

go 1.26.0

toolchain go1.26.11

require go.etcd.io/etcd/server/v3 v3.7.4
