//! From the loader to Rust: one 32-bit entry for both boot protocols, long
//! mode, and a call to [`crate::metal_main`].
//!
//! **PVH** (QEMU's `-kernel`): the ELF note `XEN_ELFNOTE_PHYS32_ENTRY`
//! names the entry; it is reached in 32-bit protected mode, paging off,
//! with `%ebx` holding the physical address of the `hvm_start_info`.
//! **Multiboot2** (GRUB): the header below; GRUB enters at the ELF entry
//! point, the same entry; `%eax` holds the multiboot2 magic and `%ebx` the boot
//! information. The entry keeps both words and lets Rust tell them apart.
//!
//! The entry builds the boot page tables (the first 4 GiB identity mapped
//! with 2 MiB pages, which covers the image, the boot information, the
//! local APIC and the I/O APIC; user accessible, as ring-3 threads share
//! this one address space for now, `user.rs`), enables PAE and long mode, loads a
//! three-entry GDT and jumps to 64-bit code on the boot stack. Rust then
//! installs its own GDT, TSS and IDT (`cpu.rs`).

use core::arch::global_asm;

/// Multiboot2's magic in `%eax` at entry.
pub const MULTIBOOT2_MAGIC: u32 = 0x36d7_6289;

global_asm!(
    r#"
    /* From 32-bit protected mode to long mode on the boot page tables:
       PAE, CR3, EFER.LME, then paging (and protection, already on). The
       boot entry and the application cores' trampoline both use it. */
    .macro long_mode_on
    movl %cr4, %eax
    orl $0x20, %eax
    movl %eax, %cr4
    movl $boot_pml4, %eax
    movl %eax, %cr3
    movl $0xC0000080, %ecx
    rdmsr
    orl $0x100, %eax
    wrmsr
    movl %cr0, %eax
    orl $0x80000001, %eax
    movl %eax, %cr0
    .endm

    /* PVH: XEN_ELFNOTE_PHYS32_ENTRY (18), owner "Xen", the entry's address. */
    .section .note.pvh, "a", @note
    .balign 4
    .long 4
    .long 4
    .long 18
    .asciz "Xen"
    .balign 4
    .long boot_entry32
    .balign 4

    /* Multiboot2 header: magic, architecture 0 (i386 protected mode),
       length, checksum and the end tag; GRUB enters at the ELF entry. */
    .section .multiboot2, "a"
    .balign 8
mb2_header:
    .long 0xe85250d6
    .long 0
    .long mb2_header_end - mb2_header
    .long -(0xe85250d6 + (mb2_header_end - mb2_header))
    .balign 8
    .word 0
    .word 0
    .long 8
mb2_header_end:

    .section .boot.text, "ax"
    .code32
    .global boot_entry32
boot_entry32:
    cli
    cld
    movl %eax, %esi
    movl %ebx, %edi
    movl $boot_stack_top, %esp

    /* Zero the six page-table pages, then link PML4 -> PDPT -> 4 PDs. */
    pushl %edi
    movl $boot_pml4, %edi
    xorl %eax, %eax
    movl $(6 * 1024), %ecx
    rep stosl
    popl %edi
    movl $boot_pdpt, %eax
    orl $7, %eax
    movl %eax, boot_pml4
    movl $boot_pd, %eax
    orl $7, %eax
    movl %eax, boot_pdpt
    addl $4096, %eax
    movl %eax, boot_pdpt + 8
    addl $4096, %eax
    movl %eax, boot_pdpt + 16
    addl $4096, %eax
    movl %eax, boot_pdpt + 24
    /* 2048 entries of 2 MiB: present, writable, user, large. */
    xorl %ecx, %ecx
1:
    movl %ecx, %eax
    shll $21, %eax
    orl $0x87, %eax
    movl %eax, boot_pd(, %ecx, 8)
    incl %ecx
    cmpl $2048, %ecx
    jne 1b

    long_mode_on
    lgdt boot_gdt_ptr
    ljmp $0x08, $boot_entry64

    .code64
boot_entry64:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movq $boot_stack_top, %rsp
    movl %edi, %edi
    movl %esi, %esi
    call metal_main
2:
    hlt
    jmp 2b

    .section .boot.data, "aw"
    .balign 8
boot_gdt:
    .quad 0
    .quad 0x00af9a000000ffff
    .quad 0x00cf92000000ffff
boot_gdt_end:
boot_gdt_ptr:
    .word boot_gdt_end - boot_gdt - 1
    .long boot_gdt

    /* The application cores' trampoline (`smp.rs`), copied to 0x8000:
       real mode, protected mode, then long mode as above. */
    .section .rodata.trampoline, "a"
    .balign 16
    .global ap_trampoline_start, ap_trampoline_end
    .code16
ap_trampoline_start:
    cli
    cld
    xorw %ax, %ax
    movw %ax, %ds
    lgdtl 0x8000 + (ap_gdt_ptr - ap_trampoline_start)
    movl %cr0, %eax
    orl $1, %eax
    movl %eax, %cr0
    ljmpl $0x08, $(0x8000 + (ap_protected - ap_trampoline_start))

    .code32
ap_protected:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    long_mode_on
    ljmp $0x18, $(0x8000 + (ap_long - ap_trampoline_start))

    .code64
ap_long:
    movabsq $ap_handoff, %rax
    movq (%rax), %rsp
    movq 8(%rax), %rdi
    movabsq $ap_main, %rax
    callq *%rax
1:
    hlt
    jmp 1b

    .balign 8
ap_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff
    .quad 0x00cf92000000ffff
    .quad 0x00af9a000000ffff
ap_gdt_end:
ap_gdt_ptr:
    .word ap_gdt_end - ap_gdt - 1
    .long 0x8000 + (ap_gdt - ap_trampoline_start)
ap_trampoline_end:
    .section .text

    .section .boot.bss, "aw", @nobits
    .balign 4096
    .global boot_pml4
boot_pml4:
    .skip 4096
boot_pdpt:
    .skip 4096
boot_pd:
    .skip 4096 * 4
    .balign 16
boot_stack:
    .skip 65536
boot_stack_top:
    "#,
    options(att_syntax)
);
