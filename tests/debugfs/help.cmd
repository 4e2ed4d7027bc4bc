# device: none
# help, aliases, and the reserved snapshot commands
help
help ls
help list
? quit
help set_super
help snapshot
help nope
help ls cd
help -n
help -n dump
snapshot list
snap create monday
quit extra
nosuchcommand
