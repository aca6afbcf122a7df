/*
 * gmt_results.h - PRIVATE to analyzer/: the names of the CUresult codes a
 * report prints beside the number (a table of the common ones).
 */
#ifndef GMT_RESULTS_H
#define GMT_RESULTS_H

/* "CUDA_ERROR_OUT_OF_MEMORY" for 2, ...; NULL for codes not in the table. */
const char *gmt_curesult_name(unsigned code);

#endif /* GMT_RESULTS_H */
