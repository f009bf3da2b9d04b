module github.com/lanleader/lanleader

go 1.26
