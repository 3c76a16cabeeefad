/* Prints the TSC rate in Hz as the engine measures it (base/util.h
 * cpu_ticks_per_second), so that every bench converts ticks with a rate it
 * read on this box rather than one it assumed. */
#include <stdio.h>

#include "base/util.h"

int main(void)
{
	printf("%.0f\n", cpu_ticks_per_second());
	return 0;
}
