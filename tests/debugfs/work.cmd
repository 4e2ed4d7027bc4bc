# the work counted: an open and one listing
work
ls /
work
work extra
