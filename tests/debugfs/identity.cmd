# options: -w
# Label and UUID in the extension record (tune2fs -L / -U), kept across
# sessions; the seal follows every commit
super
set_label "new label"
set_uuid 11111111-2222-3333-4444-555555555555
delta
super
set_label 01234567890123456789012345678901234567890123456789012345678901234
set_uuid not-a-uuid
set_uuid
set_label
set_label ""
set_uuid clear
close
open vol.img
super
super --json
