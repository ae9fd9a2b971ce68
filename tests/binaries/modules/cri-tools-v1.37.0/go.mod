// cri-tools v1.37.0 from upstream Go modules (tests/binaries/pin.py wrote this; build.py builds it).
// components: crictl
module kubesched.test/binaries/cri-tools

go 1.26.6

require sigs.k8s.io/cri-tools v1.37.0
