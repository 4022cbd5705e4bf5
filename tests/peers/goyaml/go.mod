// The Go reader of tests/test_go_reader.py, built by tests/peers/build-goyaml.sh.
// Pinned to what the peers were built with: k8s.io/apimachinery, sigs.k8s.io/yaml, go-yaml v2
// and golang.org/x/text as kubectl and kube-apiserver v1.37.2 resolve them; go-yaml v3 as
// kustomize v5.8.2 resolves it. `go version -m` on a peer binary lists what it was built with.
module modelplane-render/tests/peers/goyaml

go 1.26.0

require (
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/text v0.40.0
	k8s.io/apimachinery v0.37.2
)

require (
	github.com/fxamacker/cbor/v2 v2.9.1 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/x448/float16 v0.8.4 // indirect
	go.yaml.in/yaml/v2 v2.4.4 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/kube-openapi v0.0.0-20260721132016-d427ff9ee9ad // indirect
	sigs.k8s.io/json v0.0.0-20250730193827-2d320260d730 // indirect
	sigs.k8s.io/structured-merge-diff/v6 v6.4.2 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
