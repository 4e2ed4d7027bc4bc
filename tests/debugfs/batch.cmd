# A script goes on after a failed line, names it, and exits 1
pwd
nosuch
stat /nope
pwd
# a comment line, and an empty one

  pwd   # trailing comment
"quoted command"
