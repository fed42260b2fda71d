# The end of a script's argument loop. Source it, then make it the `case`'s last branch:
#
#   *) help_or_unknown "$1" 2,19 ;;
#
# -h/--help prints the script's own header comment (lines 2 to 19 here) and exits 0; any other
# argument is "SCRIPT: unknown argument 'ARG' (see --help)" on stderr and exit status 2.
help_or_unknown() {
  case "$1" in
    -h|--help) sed -n "$2p" "$0"; exit 0 ;;
    *) echo "$(basename "$0"): unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
}
