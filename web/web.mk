# The report page (included by the Makefile): web/gmt_web.c and the assets
# web/gmt_web_assets.S embeds (.incbin, searched in web/ by -Wa,-I), rebuilt
# when a page file changes. WEB_OBJ is what a program that writes the page
# links; tests/tools/gmt-page wraps fixtures into pages for the browser tests.
WEB_ASSETS := web/report.html web/report.css web/report.js
WEB_OBJ := $(BUILD)/obj/web/gmt_web.o $(BUILD)/obj/web/gmt_web_assets.o

$(BUILD)/obj/web/gmt_web.o: web/gmt_web.c web/gmt_web.h | $(DEPS_OK)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -Iweb -c $< -o $@

$(BUILD)/obj/web/gmt_web_assets.o: web/gmt_web_assets.S $(WEB_ASSETS)
	$(call msg,AS,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SANFLAGS) -Wa,-I,web -c $< -o $@

$(BUILD)/tests/tools/gmt-page: tests/tools/gmt-page.c $(WEB_OBJ) web/gmt_web.h
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_BASE) -Iweb -o $@ $< $(WEB_OBJ)
