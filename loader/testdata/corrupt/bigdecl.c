/* A procedure declared past loader.maxLine (10^8), which a #line directive
 * gives a compiler: loader's corrupt-data tests read its DW_AT_decl_line.
 * Built by: gcc -O2 -g -ffile-prefix-map=$PWD=. -o bigdecl-gcc12-O2 bigdecl.c */
#line 300000000
__attribute__((noinline)) int big_decl(int x) { return x * 3 + 1; }
#line 9
int main(int argc, char **argv) {
	(void)argv;
	return big_decl(argc) & 1;
}
