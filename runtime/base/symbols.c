/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - names of functions of the running program for the trace,
 * static ones included: the executable's ELF symbol table (.symtab, read
 * once from /proc/self/exe) at the address the program was loaded at.
 * Stripped programs and functions in shared libraries fall back to
 * dladdr's dynamic symbols. Safe from any thread between sym_close()s
 * (the table is read once, under a lock).
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t sy_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool loaded;
	void *map;
	size_t map_len;
	const Elf64_Sym *syms;
	size_t nsyms;
	const char *strs;
	size_t strs_len;
	uintptr_t bias;
} sy;

static int first_object(struct dl_phdr_info *info, size_t size, void *bias)
{
	(void)size;
	*(uintptr_t *)bias = info->dlpi_addr;
	return 1; /* the executable comes first */
}

static void load(void)
{
	sy.loaded = true;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	size_t len = (size_t)st.st_size;
	const Elf64_Ehdr *eh = m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || !eh->e_shoff ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		goto fail;
	const Elf64_Shdr *sh = (const void *)((const char *)m + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > len ||
		    str->sh_offset + str->sh_size > len || !str->sh_size)
			goto fail;
		sy.syms = (const void *)((const char *)m + sh[i].sh_offset);
		sy.nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
		sy.strs = (const char *)m + str->sh_offset;
		sy.strs_len = str->sh_size;
		sy.map = m;
		sy.map_len = len;
		dl_iterate_phdr(first_object, &sy.bias);
		return;
	}
fail:
	munmap(m, len);
}

const char *sym_name(uintptr_t addr)
{
	pthread_mutex_lock(&sy_lock);
	if (!sy.loaded)
		load();
	pthread_mutex_unlock(&sy_lock);
	for (size_t i = 0; i < sy.nsyms; i++) {
		const Elf64_Sym *s = &sy.syms[i];
		if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || !s->st_value ||
		    s->st_name >= sy.strs_len)
			continue;
		uintptr_t lo = sy.bias + s->st_value;
		if (addr == lo || (addr > lo && addr < lo + s->st_size)) {
			const char *name = sy.strs + s->st_name;
			/* The table ends with a NUL (checked names only). */
			if (memchr(name, 0, sy.strs_len - s->st_name))
				return name;
		}
	}
	Dl_info di;
	if (dladdr((void *)addr, &di) && di.dli_sname &&
	    (uintptr_t)di.dli_saddr == addr)
		return di.dli_sname;
	return NULL;
}

void sym_close(void)
{
	if (sy.map)
		munmap(sy.map, sy.map_len);
	pthread_mutex_lock(&sy_lock);
	memset(&sy, 0, sizeof(sy));
	pthread_mutex_unlock(&sy_lock);
}
