# Versions on a volume without snapshots: label 0 alone; making snapshots
# is not available yet.
versions
snapshot list
snapshot create monday
snapshot delete monday
snapshot
versions extra
