# --json output of stat, ls, super and extents
stat --json /hello.txt
stat --json /null
stat --json /sparse.img
stat --json /nope
ls --json /docs
ls -l --json /docs/notes
super --json
super --yaml
extents --json /sparse.img
extents --json /empty
extents --json /nope
