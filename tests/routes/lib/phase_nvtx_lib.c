/*
 * libphase_nvtx.so - a second NVTX instance for tests/routes/phase_nvtx.c:
 * built with the NVTX3 headers itself, so it carries its own hidden copy of
 * NVTX that initialises (and reaches the injection) separately from the
 * program's. Its ranges nest inside the program's (the per-thread depth and
 * the per-domain levels are the process's, not the instance's), its domain
 * "custom" is the program's domain of the same name, and the range id it
 * starts is ended by the program's instance.
 */
#include <stdio.h>

#define NVTX_AS_SYSTEM_HEADER
#include <nvtx3/nvToolsExt.h>

__attribute__((visibility("default"))) nvtxRangeId_t phase_nvtx_lib_run(void);

nvtxRangeId_t phase_nvtx_lib_run(void)
{
	nvtxEventAttributes_t a = { 0 };
	nvtxRangeId_t id;

	printf("lib push lib = %d\n", nvtxRangePushA("lib"));
	nvtxDomainHandle_t c = nvtxDomainCreateA("custom");
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "lib_c";
	printf("lib push custom lib_c = %d\n", nvtxDomainRangePushEx(c, &a));
	nvtxMarkA("lib_mark");
	id = nvtxRangeStartA("lib_se");
	printf("lib start lib_se = %llu\n", (unsigned long long)id);
	printf("lib pop custom = %d\n", nvtxDomainRangePop(c));
	printf("lib pop = %d\n", nvtxRangePop());
	return id;
}
