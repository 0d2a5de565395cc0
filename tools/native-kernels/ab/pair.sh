# Sourced by ab.sh and attn-ab.sh: the images' flags (../flags.sh), a scratch folder $tmp removed on exit, the
# folder $here, and ab_pair, which builds a harness against two versions of one kernel source:
#   ab_pair A.c B.c ENTRY FLAGS HARNESS.c OUT
# ENTRY is the source's entry point (dgr_q8, dgr_attn); the two builds export it as ENTRY_a and ENTRY_b.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../flags.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ab_pair() {
  gcc $common $4 -D"$3=$3_a" -c "$1" -o "$6.a.o"
  gcc $common $4 -D"$3=$3_b" -c "$2" -o "$6.b.o"
  gcc -O2 "$5" "$6.a.o" "$6.b.o" -o "$6"
}
