/*
 * gmt_web_assets.S - the report page's files, embedded at build time so that
 * the analyzer writes the page alone (web/gmt_web.h). Each is followed by a
 * NUL byte. The Makefile assembles this with -Wa,-I web (where .incbin looks)
 * and rebuilds it when one of the files changes.
 */
	.section .rodata
	.balign 16
	.globl gmt_web_report_html
	.type gmt_web_report_html, @object
gmt_web_report_html:
	.incbin "report.html"
	.byte 0
	.size gmt_web_report_html, . - gmt_web_report_html

	.balign 16
	.globl gmt_web_report_css
	.type gmt_web_report_css, @object
gmt_web_report_css:
	.incbin "report.css"
	.byte 0
	.size gmt_web_report_css, . - gmt_web_report_css

	.balign 16
	.globl gmt_web_report_js
	.type gmt_web_report_js, @object
gmt_web_report_js:
	.incbin "report.js"
	.byte 0
	.size gmt_web_report_js, . - gmt_web_report_js

	.section .note.GNU-stack, "", @progbits
