module github.com/memvanta/memvanta

go 1.26
