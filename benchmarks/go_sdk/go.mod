module ngfail/benchmarks/go_sdk

go 1.21

require github.com/alibaba/OpenSandbox/sdks/sandbox/go v0.0.0

// benchmarks/run points this at $NGFAIL_OPENSANDBOX_SRC/sdks/sandbox/go (go mod edit -replace).
replace github.com/alibaba/OpenSandbox/sdks/sandbox/go => ../../../OpenSandbox/sdks/sandbox/go
