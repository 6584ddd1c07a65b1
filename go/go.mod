module tvmnode.dev/go

go 1.19
