# htree on a volume without dir_index: no index; errors for a file and a bad path.
htree /
dx_dump -v /docs
htree /hello.txt
htree /nope
htree
