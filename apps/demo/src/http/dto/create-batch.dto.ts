import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, ValidateNested } from 'class-validator';
import { DocumentDto } from './document.dto';

/** Largest batch one request may carry. */
export const MAX_BATCH_DOCUMENTS = 5000;

/** A batch of archive documents: queued at BATCH priority. */
export class CreateBatchDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH_DOCUMENTS)
  @ValidateNested({ each: true })
  @Type(() => DocumentDto)
  documents!: DocumentDto[];
}
