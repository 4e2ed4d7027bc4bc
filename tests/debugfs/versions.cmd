# Versions on a volume without snapshots, opened read-only: label 0
# alone; making and removing snapshots needs -w; there is none to enter,
# and @ is the live version.
versions
snapshot list
snapshot create monday
snapshot delete monday
snapshot
versions extra
cd @monday
cd @
pwd
cd @/docs
pwd
ls @/docs/notes
cd
